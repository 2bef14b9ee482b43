"""The bulk submitter alone, without Airflow: N one-GPU pods in shards against a simulated cluster.

The wave's pods (gated, as the pipeline submits them) are created in shards of ``--shard-size`` pods of one
tenant, each shard with its own async client at ``--qps``/``--burst`` and one watch, all shards at once in one
process (as the DAG's ``bulk_shard`` tasks would run side by side); then the gates are lifted and the watches
follow the pods until every one is Ready and has ended. Printed: the time until every pod exists, the wave's
wall time, the watches and re-lists, the start-up latency percentiles (from the release) and the scheduling
pace, and this process's peak memory. Usage::

    python bench/bulk_submit.py --sizes 1000 10000 --nodes 1250
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from orchestration_overhead import Sim, cluster_config  # noqa: E402  (the same simulated cluster)

from gpupoc.common.constants import PIPELINE_GATE  # noqa: E402
from gpupoc.common.timefmt import utcnow  # noqa: E402
from gpupoc.pipeline.async_kube import AsyncKubeClient  # noqa: E402
from gpupoc.pipeline.attempts import NextAttempt  # noqa: E402
from gpupoc.pipeline.bulk_rate import TokenBucket  # noqa: E402
from gpupoc.pipeline.bulk_shard import Hooks, Shard, ShardPod, ShardRunner  # noqa: E402
from gpupoc.pipeline.pod_transitions import latency_rows, scheduling_throughput  # noqa: E402
from gpupoc.pipeline.wave import release_patch  # noqa: E402
from gpupoc.podspec import labels as L  # noqa: E402

TENANTS = (("team-vision", "team-vision"), ("team-nlp", "team-nlp"), ("team-serving", "team-serving"))


def pod_body(item: str, run: str, seconds: int) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": item, "labels": {L.RUN_ID: run}, "annotations": {L.ITEM: item}},
            "spec": {"schedulingGates": [{"name": PIPELINE_GATE}], "nodeSelector": {"gpupoc.io/pool": "training"},
                     "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                     "restartPolicy": "Never",
                     "containers": [{"name": "base", "image": "gpupoc/virtual:1.0",
                                     "env": [{"name": "WORKLOAD_DURATION_SECONDS", "value": str(seconds)}],
                                     "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}


async def release(admin: AsyncKubeClient, ns: str, run: str) -> None:
    listed = await admin.request("GET", f"/api/v1/namespaces/{ns}/pods", query=[("labelSelector", f"{L.RUN_ID}={run}")])
    patch = release_patch(utcnow())  # as the pipeline's release: the gate lifted, the moment recorded
    bucket = TokenBucket(500, 500)

    async def lift(name):
        await bucket.acquire()
        await admin.api.call_api(f"/api/v1/namespaces/{ns}/pods/{name}", "PATCH", body=patch, auth_settings=["BearerToken"],
                                 header_params={"Content-Type": "application/strategic-merge-patch+json"},
                                 _preload_content=False)
    await asyncio.gather(*(lift(p["metadata"]["name"]) for p in (listed.body or {}).get("items") or []))


async def wave(sim: Sim, n: int, args) -> dict:
    run = f"bulk-bench-{n}-{int(time.time())}"
    shards, i = [], 0
    for start in range(0, n, args.shard_size):
        ns, ctx = TENANTS[len(shards) % len(TENANTS)]
        pods = tuple(ShardPod(f"b{k}", pod_body(f"b{k}", run, args.duration)) for k in range(start, min(n, start + args.shard_size)))
        shards.append(Shard(i, ns, ctx, pods))
        i += 1
    clients = {ctx: await AsyncKubeClient.from_kubeconfig(str(sim.kubeconfig), ctx) for _, ctx in TENANTS}
    admin = await AsyncKubeClient.from_kubeconfig(str(sim.kubeconfig), "admin")
    created = {"n": 0}

    def submitted(item, pod, t, refusal):
        created["n"] += 1 if pod else 0

    hooks = Hooks(submitted=submitted, decide=lambda *a: NextAttempt.NONE, released=lambda: False)
    runners = [ShardRunner(clients[s.context], s, TokenBucket(args.qps, args.burst), hooks) for s in shards]
    t0 = time.monotonic()
    tasks = [asyncio.ensure_future(r.run(args.timeout)) for r in runners]
    while created["n"] < n and time.monotonic() - t0 < args.timeout and not all(t.done() for t in tasks):
        await asyncio.sleep(0.2)  # a shard that ended early (an error) creates nothing more: not waited for
    all_exist = time.monotonic() - t0
    for ns, _ in TENANTS:
        await release(admin, ns, run)
    results = await asyncio.gather(*tasks)
    wall = time.monotonic() - t0
    for c in [*clients.values(), admin]:
        await c.close()
    found = [t for r in results for t in r.transitions.values()]
    lat = {r["condition"]: {k: r[k] for k in ("pods", "p50_ms", "p95_ms", "p99_ms")} for r in latency_rows(found, "bench")}
    return {"n": n, "shards": len(shards), "all_exist_s": round(all_exist, 1), "wall_s": round(wall, 1),
            "watches": sum(r.watches for r in results), "relists": sum(r.relists for r in results),
            "refused_429": sum(r.throttling.refused for r in results),
            "unanswered": sum(r.throttling.unanswered for r in results), "errors": sum(len(r.errors) for r in results),
            "latency_ms": lat, "scheduling": scheduling_throughput(found),
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1000])
    p.add_argument("--nodes", type=int, default=None)
    p.add_argument("--duration", type=int, default=30)
    p.add_argument("--shard-size", type=int, default=500)
    p.add_argument("--qps", type=float, default=100)
    p.add_argument("--burst", type=int, default=100)
    p.add_argument("--timeout", type=float, default=1800)
    args = p.parse_args(argv)
    nodes = args.nodes or max(32, -(-max(args.sizes) // 8))
    work = Path(tempfile.mkdtemp(prefix="gpupoc-bulk-bench-"))
    sim = Sim(work / "sim", cluster_config(work / "cluster.yaml", nodes, 8, max(args.sizes) * 2 + 50))
    try:
        for n in args.sizes:
            print(json.dumps(asyncio.run(wave(sim, n, args))), flush=True)
    finally:
        sim.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
