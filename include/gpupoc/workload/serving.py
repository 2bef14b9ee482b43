"""The workload program's serving modes: ``serve --port N`` (an HTTP inference server) and
``load --target URL --rate R --duration D`` (a load generator writing per-second availability and latency).

``serve`` trains the small CPU model of the other modes for ``--train-seconds``, then answers:
``GET /healthz`` (200 "ok" once the model is loaded, 503 before), ``POST /v1/predict`` with
``{"instances": [[16 numbers], ...]}`` (``{"predictions": [class, ...]}``; a GET predicts one synthetic
sample), and ``GET /metrics``: its own Prometheus histogram ``gpupoc_serve_request_duration_seconds`` and the
counter ``gpupoc_serve_requests_total`` by path and code. ``--latency-ms`` adds a fixed delay to each
prediction (a slower model). It listens on ``--host`` (default: the address the simulated kubelet gives the
pod in ``GPUPOC_POD_ADDRESS``, else every address).

Every answer to ``/v1/predict`` carries the server's own time to answer it, from the request read to the answer
written, in the ``X-Gpupoc-Serve-Ms`` header, so that the load generator can tell its own lag from the
replica's (``workload/lag.py``). ``load`` is the load generator (``workload/loadgen.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Sequence

import numpy as np

from gpupoc.workload.lag import SERVE_MS_HEADER
from gpupoc.workload.loadgen import load
from gpupoc.workload.model import Mlp, synthetic_data

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
BIND_ENV = "GPUPOC_POD_ADDRESS"
TRAIN_LR = 0.2


class Histogram:
    """A Prometheus histogram and request counter, thread-safe."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts = [0] * len(BUCKETS)
        self.total = 0
        self.sum = 0.0
        self.requests: dict[tuple[str, int], int] = {}

    def observe(self, path: str, code: int, seconds: float) -> None:
        with self.lock:
            for i, bound in enumerate(BUCKETS):
                if seconds <= bound:
                    self.counts[i] += 1
            self.total += 1
            self.sum += seconds
            self.requests[(path, code)] = self.requests.get((path, code), 0) + 1

    def exposition(self) -> str:
        name = "gpupoc_serve_request_duration_seconds"
        with self.lock:
            lines = [f"# HELP {name} Time to answer a request to /v1/predict.", f"# TYPE {name} histogram"]
            lines += [f'{name}_bucket{{le="{b:g}"}} {c}' for b, c in zip(BUCKETS, self.counts)]
            lines += [f'{name}_bucket{{le="+Inf"}} {self.total}', f"{name}_sum {self.sum:.6f}",
                      f"{name}_count {self.total}",
                      "# HELP gpupoc_serve_requests_total Requests answered, by path and code.",
                      "# TYPE gpupoc_serve_requests_total counter"]
            lines += [f'gpupoc_serve_requests_total{{path="{p}",code="{c}"}} {n}'
                      for (p, c), n in sorted(self.requests.items())]
        return "\n".join(lines) + "\n"


def train_model(seconds: float, seed: int) -> Mlp:
    """The MLP of the training modes, trained by minibatch SGD for about ``seconds``."""
    x, y = synthetic_data(1024, seed)
    model = Mlp.init(seed)
    deadline = time.monotonic() + seconds
    while True:
        for i in range(0, len(x), 128):
            model.step(x[i:i + 128], y[i:i + 128], TRAIN_LR)
        if time.monotonic() >= deadline:
            return model
        time.sleep(0.01)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    model: Mlp | None = None
    latency: float = 0.0
    histogram: Histogram


class Handler(BaseHTTPRequestHandler):
    server: Server
    started: float = 0.0  # when the request line was read (the server's own time to answer starts)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's signature
        return

    def parse_request(self) -> bool:
        self.started = time.perf_counter()
        return super().parse_request()

    def _answer(self, code: int, body: str, content_type: str = "application/json") -> None:
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        if self.path.startswith("/v1/predict"):
            self.send_header(SERVE_MS_HEADER, f"{(time.perf_counter() - self.started) * 1000.0:.3f}")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.startswith("/healthz"):
            ready = self.server.model is not None
            self._answer(200 if ready else 503, "ok" if ready else "loading", "text/plain")
        elif self.path.startswith("/metrics"):
            self._answer(200, self.server.histogram.exposition(), "text/plain; version=0.0.4")
        elif self.path.startswith("/v1/predict"):
            self._predict(synthetic_data(1, int(time.monotonic() * 1000) % 10_000)[0].tolist())
        else:
            self._answer(404, json.dumps({"error": f"no such path {self.path}"}))

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        if not self.path.startswith("/v1/predict"):
            self._answer(404, json.dumps({"error": f"no such path {self.path}"}))
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            instances = json.loads(self.rfile.read(length) or b"{}").get("instances")
        except (ValueError, AttributeError):
            instances = None
        if not isinstance(instances, list) or not instances:
            self.server.histogram.observe("/v1/predict", 400, 0.0)
            self._answer(400, json.dumps({"error": 'the body must be {"instances": [[16 numbers], ...]}'}))
            return
        self._predict(instances)

    def _predict(self, instances: list) -> None:
        started = time.perf_counter()
        if self.server.model is None:
            code, body = 503, json.dumps({"error": "model loading"})
        else:
            try:
                x = np.asarray(instances, dtype=float).reshape(len(instances), -1)
                if self.server.latency:
                    time.sleep(self.server.latency)
                code, body = 200, json.dumps({"predictions": [int(v) for v in self.server.model.predict(x)]})
            except ValueError as exc:
                code, body = 400, json.dumps({"error": f"instances: {exc}"})
        self.server.histogram.observe("/v1/predict", code, time.perf_counter() - started)
        self._answer(code, body)


def serve(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="gpupoc-workload serve")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--host", default=os.environ.get(BIND_ENV) or "0.0.0.0")
    p.add_argument("--latency-ms", type=float, default=float(os.environ.get("WORKLOAD_LATENCY_MS") or 0))
    p.add_argument("--train-seconds", type=float, default=float(os.environ.get("WORKLOAD_WARMUP_SECONDS") or 1.0),
                   help="how long the model loads before /healthz answers 200 (default WORKLOAD_WARMUP_SECONDS, "
                   "else 1)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    server = Server((a.host, a.port), Handler)
    server.histogram, server.latency = Histogram(), a.latency_ms / 1000.0
    print(f"serving on {a.host}:{a.port}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server.model = train_model(a.train_seconds, a.seed)
    print("model loaded: /healthz is ready", flush=True)
    try:
        while True:
            time.sleep(3600)
    finally:
        server.shutdown()


MODES = {"serve": serve, "load": load}
