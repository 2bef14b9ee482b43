"""Throughput of the simulated cluster: 1,000 nodes x 8 GPUs, 10,000 short virtual pods, in one process.

Pods go through the API server's admission chain (``gpupoc.sim.admission.admit_pod``, when present) and
are stored the way the API stores them; the real controller loop (Kueue, scheduler, kubelet, nodes,
quota) runs them. Prints pods/s created, scheduled and completed, and the peak resident memory, next to
KWOK's published figure (20 pods/s) and this project's target (>= 200 pods/s scheduled, < 1 GiB).

    python bench/sim_throughput.py [--nodes 1000] [--gpus 8] [--pods 10000] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from gpupoc.sim.bootstrap import bootstrap
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import ClusterConfig
from gpupoc.sim.controllers.loop import loop_stats, run_controllers
from gpupoc.sim.faults import Fault
from gpupoc.sim.store import Change

KWOK_PODS_PER_SECOND = 20
TARGET_SCHEDULED_PER_SECOND = 200
TARGET_MEMORY_BYTES = 1 << 30
NAMESPACE = "bench"


def bench_config(nodes: int, gpus: int, pods: int) -> ClusterConfig:
    return ClusterConfig.model_validate({
        "name": "gpupoc-bench",
        "pools": [{"name": "bench", "nodes": nodes, "gpus_per_node": gpus, "labels": {"gpupoc.io/pool": "bench"},
                   "gpu": {"model_name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559}}],
        "tenants": [{"name": NAMESPACE, "namespace": NAMESPACE,
                     "quota": {"gpus": pods, "pods": pods}}],
        "priority_classes": [{"name": "bench-normal", "value": 1000, "preemption_policy": "Never",
                              "global_default": True}],
        "images": [{"pattern": "gpupoc/virtual:*", "kind": "virtual", "pull_seconds": 0}],
        "timing": {"termination_grace_seconds": 0},
    })


def pod_body(i: int, rng: random.Random) -> dict:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"bench-{i:05d}", "labels": {"app": "bench"}},
        "spec": {"restartPolicy": "Never", "nodeSelector": {"gpupoc.io/pool": "bench"}, "containers": [{
            "name": "main", "image": "gpupoc/virtual:1",
            "env": [{"name": "WORKLOAD_DURATION_SECONDS", "value": f"{rng.uniform(1.0, 2.0):.2f}"},
                    {"name": "WORKLOAD_GPU_UTIL", "value": "90"}],
            "resources": {"limits": {"nvidia.com/gpu": "1"}},
        }]},
    }


def admission():
    """The API server's admission chain when it is installed, else plain defaulting."""
    try:
        from gpupoc.sim.admission import admit_pod
        return admit_pod, "gpupoc.sim.admission.admit_pod"
    except ImportError:
        def admit(state: ClusterState, pod: dict, namespace: str) -> dict:
            pod["metadata"]["namespace"] = namespace
            pod["spec"].setdefault("schedulerName", "default-scheduler")
            pod["status"] = {"phase": "Pending"}
            return pod
        return admit, "store.create only (no admission module)"


class Progress:
    """First-scheduled and first-completed times per pod, from store changes."""

    def __init__(self) -> None:
        self.scheduled: dict[str, float] = {}
        self.completed: dict[str, float] = {}
        self.failed = 0

    def __call__(self, change: Change) -> None:
        if change.resource != "pods":
            return
        name = change.obj["metadata"]["name"]
        if change.obj["spec"].get("nodeName") and name not in self.scheduled:
            self.scheduled[name] = time.perf_counter()
        phase = change.obj.get("status", {}).get("phase")
        if phase in ("Succeeded", "Failed") and name not in self.completed:
            self.completed[name] = time.perf_counter()
            self.failed += phase == "Failed"


async def run(args: argparse.Namespace) -> dict:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="gpupoc-bench-") as tmp:
        faults = frozenset({Fault.QUOTA_NOT_ENFORCED}) if args.no_quota_admission else frozenset()
        state = ClusterState(bench_config(args.nodes, args.gpus, args.pods), Path(tmp), faults=faults)
        bootstrap(state)
        admit, admission_path = admission()
        progress = Progress()
        state.store.add_listener(progress)
        stop = asyncio.Event()
        controllers = asyncio.get_running_loop().create_task(run_controllers(state, stop))
        t0 = time.perf_counter()
        admit_s, created = 0.0, 0
        for i in range(args.pods):
            if time.perf_counter() - t0 > args.create_budget:
                break  # admission is the bottleneck: report what was reached
            started = time.perf_counter()
            pod = admit(state, pod_body(i, rng), NAMESPACE)
            admit_s += time.perf_counter() - started
            state.store.create("pods", pod)
            created += 1
            state.kick()
            if i % args.batch == args.batch - 1:
                await asyncio.sleep(0)  # an API server interleaves requests with the controllers
        created_at = time.perf_counter()
        deadline = t0 + args.timeout
        while len(progress.completed) < created and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
        stop.set()
        await controllers
        end = time.perf_counter()
    sched_end = max(progress.scheduled.values(), default=end)
    done_end = max(progress.completed.values(), default=end)
    return {
        "admission": admission_path + (" (quota check skipped)" if args.no_quota_admission else ""),
        "admit_s": admit_s,
        "steps": {k: tuple(v) for k, v in loop_stats(state).items()},
        "pods": args.pods,
        "created": created,
        "created_s": created_at - t0,
        "scheduled": len(progress.scheduled),
        "scheduled_s": sched_end - t0,
        "completed": len(progress.completed),
        "failed": progress.failed,
        "completed_s": done_end - t0,
        "capacity": args.nodes * args.gpus,
        "first_wave_s": sorted(progress.scheduled.values())[min(args.nodes * args.gpus, args.pods) - 1] - t0
        if len(progress.scheduled) >= min(args.nodes * args.gpus, args.pods) else None,
    }


def report(r: dict) -> bool:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    rate = lambda n, s: n / s if s > 0 else float("inf")  # noqa: E731
    sched_rate = rate(r["scheduled"], r["scheduled_s"])
    print(f"admission path      : {r['admission']}")
    print(f"pods                : {r['pods']} (1 GPU each, 1-2 s virtual) on {r['capacity']} GPUs")
    short = "" if r["created"] == r["pods"] else f"  (budget exhausted: {r['pods'] - r['created']} not created)"
    print(f"created             : {r['created']} in {r['created_s']:.1f} s = "
          f"{rate(r['created'], r['created_s']):.0f} pods/s{short}")
    print(f"scheduled           : {r['scheduled']} in {r['scheduled_s']:.1f} s = {sched_rate:.0f} pods/s")
    if r["first_wave_s"] is not None:
        n = min(r["capacity"], r["pods"])
        print(f"  first {n} (no waiting for capacity): {r['first_wave_s']:.1f} s = {n / r['first_wave_s']:.0f} pods/s")
    print(f"completed           : {r['completed']} ({r['failed']} failed) in {r['completed_s']:.1f} s "
          f"= {rate(r['completed'], r['completed_s']):.0f} pods/s")
    print(f"peak memory (RSS)   : {rss / 2**20:.0f} MiB")
    print(f"time in admission   : {r['admit_s']:.1f} s ({1000 * r['admit_s'] / max(r['created'], 1):.2f} ms/pod)")
    for step, (calls, secs) in r["steps"].items():
        print(f"time in {step:<12}: {secs:.1f} s over {calls} passes ({1000 * secs / max(calls, 1):.1f} ms/pass)")
    print(f"reference (KWOK)    : {KWOK_PODS_PER_SECOND} pods/s")
    ok = (sched_rate >= TARGET_SCHEDULED_PER_SECOND and rss < TARGET_MEMORY_BYTES
          and r["scheduled"] == r["pods"] and r["completed"] == r["pods"])
    print(f"target              : >= {TARGET_SCHEDULED_PER_SECOND} pods/s scheduled, < 1 GiB, all pods done: "
          f"{'MET' if ok else 'NOT MET'}")
    return ok


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--gpus", type=int, default=8)
    p.add_argument("--pods", type=int, default=10000)
    p.add_argument("--batch", type=int, default=100, help="pods created between yields to the event loop")
    p.add_argument("--create-budget", type=float, default=90.0, help="stop creating pods after this many seconds")
    p.add_argument("--timeout", type=float, default=150.0, help="give up waiting for completions after this")
    p.add_argument("--no-quota-admission", action="store_true",
                   help="skip the ResourceQuota check at admission (isolates the controllers' throughput)")
    p.add_argument("--profile", action="store_true", help="print the top functions by cumulative time")
    args = p.parse_args(argv)
    prof = cProfile.Profile() if args.profile else None
    if prof:
        prof.enable()
    result = asyncio.run(run(args))
    if prof:
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(30)
        print(out.getvalue())
    return 0 if report(result) else 1


if __name__ == "__main__":
    sys.exit(main())
