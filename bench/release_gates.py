"""The gate release alone: N gated one-GPU pods on a simulated cluster, their gates lifted by the pipeline's
release (``pipeline/wave.py`` ``release_wave``) from threads of the sync client (the per-pod path) or through the
async client (``pipeline/async_release.py``, the bulk path), each path on its own wave.

Printed per run and path: the seconds from the start of ``release_wave`` (its list of the wave, then every
PATCH) to its end, and the spread of the gate removals as the API server's audit log dates them (the first to
the last PATCH of the wave). No Airflow and no other load: what the release and the simulated API server
can do on this machine. Usage::

    python bench/release_gates.py --sizes 1000 10000 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bulk_submit import pod_body  # noqa: E402
from orchestration_overhead import Sim, cluster_config  # noqa: E402

from gpupoc.pipeline import wave as W  # noqa: E402
from gpupoc.pipeline.async_kube import AsyncKubeClient  # noqa: E402
from gpupoc.pipeline.async_release import lift_gates  # noqa: E402
from gpupoc.pipeline.k8s import ClientFactory  # noqa: E402

NS = "team-vision"


async def create(kubeconfig: str, run: str, n: int) -> None:
    """The wave's gated pods, 64 creations in flight (not measured)."""
    client = await AsyncKubeClient.from_kubeconfig(kubeconfig, "admin")
    gate = asyncio.Semaphore(64)

    async def one(i: int) -> None:
        async with gate:
            await client.request("POST", f"/api/v1/namespaces/{NS}/pods", body=pod_body(f"{run}-{i}", run, 5))

    await asyncio.gather(*(one(i) for i in range(n)))
    await client.close()


def patch_spread(sim: Sim, run: str) -> float | None:
    """First to last gate removal of the wave's pods in the audit log (seconds)."""
    moments = [datetime.fromisoformat(e["stageTimestamp"].replace("Z", "+00:00")) for e in sim.audit()
               if e.get("verb") == "patch" and (e.get("objectRef") or {}).get("name", "").startswith(run + "-")]
    return round((max(moments) - min(moments)).total_seconds(), 2) if moments else None


def release(sim: Sim, n: int, path: str, index: int) -> dict:
    run = f"rel-{path}-{n}-{index}"
    kubeconfig = str(sim.kubeconfig)
    asyncio.run(create(kubeconfig, run, n))
    lift = None if path == "threads" else (
        lambda pods, patch: lift_gates(kubeconfig, "admin", pods, patch, qps=1000, burst=1000))
    t0 = time.monotonic()
    rel = W.release_wave(ClientFactory(kubeconfig=kubeconfig).caller("admin"), [NS], f"gpupoc.io/run-id={run}",
                         [f"{run}-{i}" for i in range(n)], timeout_s=120, lift_all=lift)
    seconds = round(time.monotonic() - t0, 2)
    return {"n": n, "path": path, "found": rel.found, "errors": len(rel.errors), "release_s": seconds,
            "patch_spread_s": patch_spread(sim, run)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--paths", nargs="+", choices=("threads", "async"), default=["threads", "async"])
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="gpupoc-release-bench-"))
    total = args.runs * len(args.paths) * sum(args.sizes)  # every wave stays (ended pods hold no GPU)
    sim = Sim(work / "sim", cluster_config(work / "cluster.yaml", -(-max(args.sizes) // 8) + 1, 8, total + 50))
    rows = []
    try:
        for index in range(args.runs):
            for n in args.sizes:
                for path in args.paths:
                    rows.append(release(sim, n, path, index))
                    print(json.dumps(rows[-1]), flush=True)
                    time.sleep(8)  # the wave's 5 s pods end and give their GPUs back
    finally:
        sim.stop()
    print("\nmedian of", args.runs, "runs:")
    for n in args.sizes:
        for path in args.paths:
            mine = [r for r in rows if r["n"] == n and r["path"] == path]
            print(f"  {n:6d} pods, {path:7s}: release {statistics.median(r['release_s'] for r in mine)} s, "
                  f"gate removals spread {statistics.median(r['patch_spread_s'] or 0 for r in mine)} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
