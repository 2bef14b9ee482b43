"""Workloads admitted per second by real Kueue (``make control-plane``'s build, the version in pins.env) on the real
control plane's KWOK nodes, beside Kueue's own published figure (15,000 workloads in 351 s, about 43 per second).

A wave: ``--workloads`` plain pods with the queue label (Kueue's pod integration: its webhook gates each pod and
makes its Workload; with ``--direct``, Workload objects created directly, as Kueue's own performance test does),
each asking ``cpu: 10m`` of a ClusterQueue whose quota holds them all, created 64 at a time.
The admissions are followed by one watch on the namespace's Workloads (``pipeline/watch_cache.py``): the rate
is the Workloads admitted over the span from the first creation to the last admission received. Kueue runs at
the client rate the project starts it with (``kueue_manifests.configuration``: 50 requests/s, burst 100).

    PYTHONPATH=include .venv/bin/python bench/kueue_admissions.py --workloads 10000 --nodes 100 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from gpupoc.controlplane import start_control_plane
from gpupoc.controlplane.keys import ADMIN
from gpupoc.controlplane.kueue import start_kueue
from gpupoc.pipeline.async_kube import AsyncKubeClient
from gpupoc.pipeline.k8s import ClientFactory
from gpupoc.pipeline.watch_cache import WatchingCaller
from gpupoc.plan import DEFAULT_PLAN, load_plan
from gpupoc.plan.model import Pool

IN_FLIGHT = 64
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
CQ, LQ, FLAVOR = "bench-cq", "bench-lq", "bench"


def queues(ns: str, quota_cpu: int) -> str:
    return f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {FLAVOR}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {CQ}}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{{name: {FLAVOR}, resources: [{{name: cpu, nominalQuota: {quota_cpu}}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: {LQ}, namespace: {ns}}}
spec: {{clusterQueue: {CQ}}}
"""


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": LQ}},
            "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                     "tolerations": [{"operator": "Exists"}],
                     "containers": [{"name": "main", "image": "gpupoc/virtual:1.0",
                                     "resources": {"requests": {"cpu": "10m"}}}]}}


class Admissions:
    """Workloads seen admitted (by name) and when the last admission was received."""

    def __init__(self) -> None:
        self.admitted: set[str] = set()
        self.last = 0.0
        self.lock = threading.Lock()

    def on_change(self, kind: str, wl: dict, received) -> None:
        conds = (wl.get("status") or {}).get("conditions") or []
        if kind != "DELETED" and any(c.get("type") == "Admitted" and c.get("status") == "True" for c in conds):
            with self.lock:
                name = (wl.get("metadata") or {}).get("name", "")
                if name not in self.admitted:
                    self.admitted.add(name)
                    self.last = time.monotonic()


def workload(name: str) -> dict:
    template = {k: v for k, v in pod(name).items() if k == "spec"}
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {"name": name},
            "spec": {"queueName": LQ, "podSets": [{"name": "main", "count": 1, "template": template}]}}


async def _create(kubeconfig: str, ns: str, count: int, direct: bool) -> None:
    client = await AsyncKubeClient.from_kubeconfig(kubeconfig, ADMIN)
    gate = asyncio.Semaphore(IN_FLIGHT)
    path = f"{KUEUE}/namespaces/{ns}/workloads" if direct else f"/api/v1/namespaces/{ns}/pods"

    async def one(i: int) -> None:
        async with gate:
            body = workload(f"w{i:05d}") if direct else pod(f"w{i:05d}")
            answer = await client.request("POST", path, body=body, success_body=False)
            if answer.status >= 300:
                raise SystemExit(f"POST {path}: HTTP {answer.status}: {str(answer.body)[:300]}")

    try:
        await asyncio.gather(*(one(i) for i in range(count)))
    finally:
        await client.close()


def wave(cp, ns: str, count: int, direct: bool) -> dict:
    """One wave in a fresh namespace: the seconds until every Workload was admitted, and the rate."""
    cp.run_kubectl("create", "namespace", ns)
    cp.run_kubectl("apply", "-f", "-", input=queues(ns, count))
    factory = ClientFactory(str(cp.kubeconfig))
    seen = Admissions()
    watcher = WatchingCaller(factory.caller(ADMIN), lambda path: seen.on_change)
    watcher.call("GET", f"{KUEUE}/namespaces/{ns}/workloads")
    t0 = time.monotonic()
    try:
        asyncio.run(_create(str(cp.kubeconfig), ns, count, direct))
        created = time.monotonic() - t0
        while len(seen.admitted) < count:
            time.sleep(0.5)
            if time.monotonic() - t0 > 3600:
                raise SystemExit(f"{ns}: only {len(seen.admitted)} of {count} admitted after 3600 s")
    finally:
        watcher.close()
        factory.close()
    seconds = seen.last - t0
    return {"namespace": ns, "workloads": count, "created_s": round(created, 1), "admitted_s": round(seconds, 1),
            "admitted_per_s": round(count / seconds, 1), "objects": "Workloads" if direct else "pods"}


def clear(cp, ns: str) -> None:
    cp.run_kubectl("delete", "namespace", ns, "--wait=true", timeout=3600, check=False)
    cp.run_kubectl("delete", "clusterqueue", CQ, "--wait=true", timeout=600, check=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", type=int, default=10000)
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--direct", action="store_true", help="create Workload objects, not pods")
    a = ap.parse_args(argv)
    if a.workloads > a.nodes * 110:
        ap.error(f"--workloads {a.workloads}: more than the {a.nodes * 110} pods --nodes can hold (110 each)")
    plan = load_plan(DEFAULT_PLAN)
    pool = Pool.model_validate({**plan.pool("training").model_dump(), "nodes": a.nodes, "node_names": []})
    cp = start_control_plane(Path(tempfile.mkdtemp(prefix="kueue-bench-")), pools=[pool], plan=plan,
                             process_runner=False)
    try:
        kueue = start_kueue(cp)
        print(f"Kueue {kueue.version} on Kubernetes {cp.version}: {a.nodes} KWOK nodes", flush=True)
        results = []
        for r in range(a.runs):
            res = wave(cp, f"wave-{r}", a.workloads, a.direct)
            print(json.dumps(res), flush=True)
            results.append(res)
            clear(cp, res["namespace"])
    finally:
        cp.stop()
    rates = [r["admitted_per_s"] for r in results]
    print(f"median: {statistics.median(rates)} workloads admitted/s ({a.workloads} workloads on {a.nodes} nodes, "
          f"runs {rates}; Kueue's published figure: 15,000 in 351 s, 42.7/s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
