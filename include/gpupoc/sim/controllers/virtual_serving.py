"""The virtual image's serving mode: a virtual container asked to serve (``args: [serve, --port, N]`` or
``WORKLOAD_MODE=serve`` with ``WORKLOAD_PORT``) answers HTTP on its pod address as the workload program's
``serve`` mode does (``workload/serving.py``), without a process: ``/healthz`` "ok", ``/v1/predict`` after
``WORKLOAD_LATENCY_MS`` (default 5) with one prediction per instance, and ``/metrics`` with the same
histogram, so that a thousand replicas cost no processes. For its first ``WORKLOAD_WARMUP_SECONDS`` (default
0) it is still loading its model: ``/healthz`` and ``/v1/predict`` answer 503. It runs until the container is
stopped. Its answers carry its own time in ``X-Gpupoc-Serve-Ms`` as the process's do: its model's time and its
handler's work; the time the simulator's event loop kept it waiting beyond its model's time is the
simulator's, the harness's, not the replica's."""

from __future__ import annotations

import asyncio
import json
import time

from aiohttp import web

from gpupoc.kube.containers import serving_port  # noqa: F401 - read here by the kubelet
from gpupoc.sim.pod_network import host_address
from gpupoc.workload.lag import SERVE_MS_HEADER
from gpupoc.workload.serving import Histogram

DEFAULT_LATENCY_MS = 5.0


def _number(env: dict[str, str], name: str, default: float) -> float:
    try:
        return max(0.0, float(env.get(name) or default))
    except ValueError:
        return default


def _app(latency: float, ready_at: float) -> web.Application:
    histogram = Histogram()

    def loading() -> bool:
        return time.monotonic() < ready_at

    async def healthz(request: web.Request) -> web.Response:
        return web.Response(status=503, text="loading") if loading() else web.Response(text="ok")

    async def predict(request: web.Request) -> web.Response:
        started = time.perf_counter()
        if loading():
            histogram.observe("/v1/predict", 503, 0.0)
            return web.json_response({"error": "model loading"}, status=503)
        count = 1
        if request.method == "POST":
            try:
                count = len((await request.json()).get("instances") or [])
            except (ValueError, AttributeError):
                count = 0
            if not count:
                histogram.observe("/v1/predict", 400, 0.0)
                return web.json_response({"error": 'the body must be {"instances": [[16 numbers], ...]}'},
                                         status=400)
        slept = time.perf_counter()
        await asyncio.sleep(latency)
        loop_lag = max(0.0, time.perf_counter() - slept - latency)  # the simulator's event loop, not the model
        own = time.perf_counter() - started - loop_lag
        histogram.observe("/v1/predict", 200, own)
        return web.Response(text=json.dumps({"predictions": [0] * count}), content_type="application/json",
                            headers={SERVE_MS_HEADER: f"{own * 1000.0:.3f}"})

    async def metrics(request: web.Request) -> web.Response:
        return web.Response(text=histogram.exposition(), content_type="text/plain")

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_route("*", "/v1/predict", predict)
    app.router.add_get("/metrics", metrics)
    return app


async def start(pod_ip: str, port: int, env: dict[str, str]) -> web.AppRunner:
    """Listen on the pod's address; the caller cleans the runner up when the container stops."""
    latency = _number(env, "WORKLOAD_LATENCY_MS", DEFAULT_LATENCY_MS) / 1000.0
    ready_at = time.monotonic() + _number(env, "WORKLOAD_WARMUP_SECONDS", 0.0)
    runner = web.AppRunner(_app(latency, ready_at), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host_address(pod_ip), port).start()
    return runner
