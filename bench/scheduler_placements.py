"""Placements per second of the real kube-scheduler v1.37 (``make control-plane``'s binaries) for a gated wave on
KWOK nodes, at its default client rate (50 requests/s, burst 100) and at a raised one (``--qps``).

A wave: ``--pods`` gated pods asking ``cpu: 10m`` each, created 64 at a time (not measured) on ``--nodes`` KWOK
nodes (110 pods each), then released as the pipeline releases a bulk wave (every gate lifted through the async
client, 64 PATCHes in flight). The placements are counted from kube-apiserver's own
``apiserver_request_total`` for ``pods/binding`` (read every ``POLL`` seconds): the rate is the bindings over
the span from the release's start to the moment the last one was counted. Each rate has its own fresh
control plane; ``--runs`` waves per rate, the median printed last.

    PYTHONPATH=include .venv/bin/python bench/scheduler_placements.py --pods 10000 --nodes 100 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from gpupoc.common.constants import PIPELINE_GATE
from gpupoc.common.timefmt import utcnow
from gpupoc.controlplane import start_control_plane
from gpupoc.controlplane.flags import Features
from gpupoc.controlplane.keys import ADMIN
from gpupoc.pipeline.async_kube import AsyncKubeClient
from gpupoc.pipeline.wave import release_patch
from gpupoc.plan import DEFAULT_PLAN, load_plan
from gpupoc.plan.model import Pool

POLL = 1.0
IN_FLIGHT = 64
BINDINGS = re.compile(r'^apiserver_request_total\{([^}]*)\} (\S+)$', re.M)


def bindings(cp) -> int:
    """Pods bound so far, as kube-apiserver counts its answered ``pods/binding`` creations."""
    text = cp.run_kubectl("get", "--raw", "/metrics", timeout=60).stdout
    total = 0.0
    for labels, value in BINDINGS.findall(text):
        if 'subresource="binding"' in labels and 'resource="pods"' in labels and 'code="201"' in labels:
            total += float(value)
    return int(total)


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"bench": "placements"}},
            "spec": {"schedulingGates": [{"name": PIPELINE_GATE}], "restartPolicy": "Never",
                     "tolerations": [{"operator": "Exists"}],
                     "containers": [{"name": "c", "image": "gpupoc/virtual:1.0",
                                     "resources": {"requests": {"cpu": "10m"}}}]}}


async def _each(client: AsyncKubeClient, names: list[str], send) -> None:
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(name: str) -> None:
        async with gate:
            await send(client, name)

    await asyncio.gather(*(one(n) for n in names))


async def _create(kubeconfig: str, ns: str, names: list[str]) -> None:
    client = await AsyncKubeClient.from_kubeconfig(kubeconfig, ADMIN)
    try:
        await client.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}})
        await _each(client, names, lambda c, n: c.request("POST", f"/api/v1/namespaces/{ns}/pods", body=pod(n),
                                                          success_body=False))
    finally:
        await client.close()


async def _release(kubeconfig: str, ns: str, names: list[str]) -> None:
    client = await AsyncKubeClient.from_kubeconfig(kubeconfig, ADMIN)
    patch = release_patch(utcnow())
    try:
        await _each(client, names, lambda c, n: c.request(
            "PATCH", f"/api/v1/namespaces/{ns}/pods/{n}", body=patch,
            content_type="application/strategic-merge-patch+json", success_body=False))
    finally:
        await client.close()


def wave(cp, ns: str, count: int) -> dict:
    """One wave: created gated (not measured), released, its bindings counted until all are bound."""
    names = [f"p{i:05d}" for i in range(count)]
    asyncio.run(_create(str(cp.kubeconfig), ns, names))
    before = bindings(cp)
    t0 = time.monotonic()
    asyncio.run(_release(str(cp.kubeconfig), ns, names))
    released = time.monotonic() - t0
    bound = 0
    while bound < count:
        time.sleep(POLL)
        bound = bindings(cp) - before
        if time.monotonic() - t0 > 1800:
            raise SystemExit(f"{ns}: only {bound} of {count} pods bound after 1800 s")
    seconds = time.monotonic() - t0
    return {"namespace": ns, "pods": count, "released_s": round(released, 1), "bound_s": round(seconds, 1),
            "pods_per_s": round(count / seconds, 1)}


def clear(cp, ns: str) -> None:
    cp.run_kubectl("delete", "namespace", ns, "--wait=true", timeout=1800, check=False)


def measure(qps: int | None, a: argparse.Namespace) -> list[dict]:
    plan = load_plan(DEFAULT_PLAN)
    pool = Pool.model_validate({**plan.pool("training").model_dump(), "nodes": a.nodes, "node_names": []})
    root = Path(tempfile.mkdtemp(prefix="placements-bench-"))
    cp = start_control_plane(root, pools=[pool], plan=plan, process_runner=False,
                             features=Features(scheduler_qps=qps))
    try:
        label = f"client rate {qps}/s, burst {2 * qps}" if qps else "default client rate (50/s, burst 100)"
        print(f"kube-scheduler {cp.version}, {label}: {a.nodes} KWOK nodes", flush=True)
        out = []
        for r in range(a.runs):
            res = {**wave(cp, f"wave-{r}", a.pods), "scheduler_qps": qps or "default"}
            print(json.dumps(res), flush=True)
            out.append(res)
            clear(cp, res["namespace"])
        return out
    finally:
        cp.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--qps", type=int, default=500, help="the raised client rate (0: measure the default only)")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    if a.pods > a.nodes * 110:
        ap.error(f"--pods {a.pods}: more than the {a.nodes * 110} pods --nodes can hold (110 each)")
    for qps in [None, *([a.qps] if a.qps else [])]:
        rates = [r["pods_per_s"] for r in measure(qps, a)]
        print(f"median at {qps or 'the default'} client rate: {statistics.median(rates)} pods placed/s "
              f"({a.pods} pods on {a.nodes} nodes, runs {rates})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
