"""Gang scheduling on the simulated cluster: a knavigator-like burst of gang jobs on 1,000 nodes x 8 GPUs.

After NVIDIA knavigator's gang benchmark (a burst of jobs of 1-32 replicas, judged by GPU occupancy): JOBS
jobs of a seeded random 1-32 replicas, each pod asking for a whole node (8 GPUs) and running a short virtual
workload, are submitted at once to one tenant, in the way each scheduler mode takes gangs:
- kube: plain pods (kube-scheduler has no gangs: a job may run partly);
- kueue: a Kueue pod group per job (label ``kueue.x-k8s.io/pod-group-name``, annotation
  ``kueue.x-k8s.io/pod-group-total-count``) in a LocalQueue of a ClusterQueue as large as the cluster;
- volcano: a PodGroup (``minMember`` = replicas) per job, pods with ``schedulerName: volcano`` and the
  ``scheduling.k8s.io/group-name`` annotation;
- kai: a PodGroup (``scheduling.run.ai/v2alpha2``) per job, pods with ``schedulerName: kai-scheduler``, the
  ``kai.scheduler/queue`` label and the ``pod-group-name`` annotation.
The real controller loop runs everything (admission, queues, scheduler, kubelet). Printed: pods/s placed while
the cluster fills (the scheduler's rate when nothing waits for GPUs) and overall (bound by the jobs'
run times once the cluster is full), the median time from a job's submission to its full placement, the
GPU occupancy while jobs waited, and the partial gangs (jobs with some but not all pods bound) seen at any
time and left at the end. Target: >= 200 pods/s placed and no partial gang.

    python bench/sim_gangs.py [--mode kube|kueue|volcano|kai] [--jobs 150] [--nodes 1000] [--seed 7]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from gpupoc.sim.admission import admit_pod, after_pod_created
from gpupoc.sim.bootstrap import bootstrap
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import ClusterConfig
from gpupoc.sim.controllers.loop import loop_stats, run_controllers
from gpupoc.sim.faults import Fault
from gpupoc.sim.store import Change

NS = "bench"
GPUS_PER_NODE = 8
TARGET_PODS_PER_SECOND = 200
KNAVIGATOR = "knavigator gang benchmark: 53 jobs of 1-32 replicas on 32 nodes, judged by GPU occupancy"


def bench_config(mode: str, nodes: int, pods: int) -> ClusterConfig:
    gpus = nodes * GPUS_PER_NODE
    data: dict = {
        "name": "gpupoc-gangs", "scheduler": mode,
        "pools": [{"name": "bench", "nodes": nodes, "gpus_per_node": GPUS_PER_NODE,
                   "labels": {"gpupoc.io/pool": "bench"},
                   "gpu": {"model_name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559}}],
        "tenants": [{"name": NS, "namespace": NS, "quota": {"gpus": pods * GPUS_PER_NODE, "pods": pods}}],
        "priority_classes": [{"name": "bench-train", "value": 50, "preemption_policy": "Never",
                              "global_default": True}],
        "images": [{"pattern": "gpupoc/virtual:*", "kind": "virtual", "pull_seconds": 0}],
        "timing": {"termination_grace_seconds": 0, "scheduler_retry_seconds": 2},
    }
    if mode == "kueue":
        data["kueue"] = {"cluster_queues": [{"name": "bench", "flavor": "bench", "nominal_gpus": gpus}],
                         "local_queues": [{"name": "bench", "namespace": NS, "cluster_queue": "bench"}]}
    if mode == "volcano":
        data["volcano"] = {"queues": [{"name": NS, "weight": 1}]}
    if mode == "kai":
        data["kai"] = {"queues": [{"name": "root", "quota_gpus": gpus},
                                  {"name": NS, "parent": "root", "quota_gpus": gpus}]}
    return ClusterConfig.model_validate(data)


def pod_body(mode: str, job: str, i: int, replicas: int, seconds: float) -> dict:
    meta: dict = {"name": f"{job}-{i:02d}", "labels": {"bench/job": job}, "annotations": {}}
    spec: dict = {"restartPolicy": "Never", "nodeSelector": {"gpupoc.io/pool": "bench"}, "containers": [{
        "name": "main", "image": "gpupoc/virtual:1",
        "env": [{"name": "WORKLOAD_DURATION_SECONDS", "value": f"{seconds:.1f}"}],
        "resources": {"limits": {"nvidia.com/gpu": str(GPUS_PER_NODE)}}}]}
    if mode == "kueue":
        meta["labels"].update({"kueue.x-k8s.io/queue-name": NS, "kueue.x-k8s.io/pod-group-name": job})
        meta["annotations"]["kueue.x-k8s.io/pod-group-total-count"] = str(replicas)
    elif mode == "volcano":
        spec["schedulerName"] = "volcano"
        meta["annotations"]["scheduling.k8s.io/group-name"] = job
    elif mode == "kai":
        spec["schedulerName"] = "kai-scheduler"
        meta["labels"]["kai.scheduler/queue"] = NS
        meta["annotations"]["pod-group-name"] = job
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def pod_group(mode: str, job: str, replicas: int) -> dict | None:
    if mode == "volcano":
        return {"metadata": {"name": job, "namespace": NS},
                "spec": {"minMember": replicas, "queue": NS,
                         "minResources": {"nvidia.com/gpu": str(replicas * GPUS_PER_NODE)}}}
    if mode == "kai":
        return {"metadata": {"name": job, "namespace": NS}, "spec": {"minMember": replicas, "queue": NS}}
    return None


class Tracker:
    """Per job: pods bound now, when it was submitted and first fully placed; GPU occupancy over time."""

    def __init__(self, replicas: dict[str, int], capacity: int):
        self.replicas = replicas
        self.capacity = capacity
        self.bound: dict[str, set[str]] = {j: set() for j in replicas}
        self.ever_bound: set[str] = set()
        self.submitted: dict[str, float] = {}
        self.full: dict[str, float] = {}
        self.bind_times: list[float] = []
        self.partial_seen: set[str] = set()
        self.gpus = 0
        self.samples: list[tuple[float, int]] = []

    def __call__(self, change: Change) -> None:
        if change.resource != "pods":
            return
        pod = change.obj
        job = (pod["metadata"].get("labels") or {}).get("bench/job")
        if job is None:
            return
        name = pod["metadata"]["name"]
        holds = (change.type != "DELETED" and bool(pod["spec"].get("nodeName"))
                 and pod.get("status", {}).get("phase") not in ("Succeeded", "Failed"))
        now = time.perf_counter()
        if holds and name not in self.bound[job]:
            self.bound[job].add(name)
            self.gpus += GPUS_PER_NODE
            if name not in self.ever_bound:
                self.ever_bound.add(name)
                self.bind_times.append(now)
        elif not holds and name in self.bound[job]:
            self.bound[job].discard(name)
            self.gpus -= GPUS_PER_NODE
        if len(self.bound[job]) == self.replicas[job] and job not in self.full:
            self.full[job] = now
        self.samples.append((now, self.gpus))

    def partial_now(self) -> list[str]:
        """Jobs with some pods bound and others not, never yet whole (sampled between controller passes, so
        a gang being bound pod by pod within one pass does not count)."""
        out = [j for j, pods in self.bound.items() if 0 < len(pods) < self.replicas[j] and j not in self.full]
        self.partial_seen.update(out)
        return out

    def occupancy(self, start: float, end: float) -> float:
        """Time-weighted share of GPUs allocated between ``start`` and ``end``."""
        area, last_t, last_g = 0.0, start, 0
        for t, g in self.samples:
            if t > end:
                break
            if t >= start:
                area += last_g * (t - last_t)
                last_t = t
            last_g = g
        area += last_g * max(0.0, end - last_t)
        return area / (self.capacity * max(end - start, 1e-9))


async def run(args: argparse.Namespace) -> dict:
    rng = random.Random(args.seed)
    replicas = {f"job-{j:03d}": rng.randint(1, 32) for j in range(args.jobs)}
    durations = {j: rng.uniform(args.min_seconds, args.max_seconds) for j in replicas}
    total_pods = sum(replicas.values())
    with tempfile.TemporaryDirectory(prefix="gpupoc-gangs-") as tmp:
        state = ClusterState(bench_config(args.mode, args.nodes, total_pods), Path(tmp),
                             faults=frozenset({Fault.QUOTA_NOT_ENFORCED}))
        bootstrap(state)
        tracker = Tracker(replicas, args.nodes * GPUS_PER_NODE)
        state.store.add_listener(tracker)
        stop = asyncio.Event()
        controllers = asyncio.get_running_loop().create_task(run_controllers(state, stop))
        t0 = time.perf_counter()
        for job, n in replicas.items():
            group = pod_group(args.mode, job, n)
            if group is not None:
                state.store.create("podgroups", group)
            tracker.submitted[job] = time.perf_counter()
            for i in range(n):
                pod = admit_pod(state, pod_body(args.mode, job, i, n, durations[job]), NS)
                state.store.create("pods", pod)
                after_pod_created(state, pod)
            state.kick()
            await asyncio.sleep(0)
        created = time.perf_counter()
        deadline = t0 + args.timeout
        while len(tracker.full) < len(replicas) and time.perf_counter() < deadline:
            tracker.partial_now()
            await asyncio.sleep(0.05)
        last_full = max(tracker.full.values(), default=time.perf_counter())
        partial_left = tracker.partial_now()
        stop.set()
        await controllers
    waits = [tracker.full[j] - tracker.submitted[j] for j in tracker.full]
    first_wave = min(args.nodes, total_pods)
    binds = sorted(tracker.bind_times)
    return {
        "mode": args.mode, "jobs": len(replicas), "pods": total_pods, "nodes": args.nodes,
        "created_s": created - t0, "placed": len(tracker.ever_bound),
        "placed_s": (binds[-1] - t0) if binds else 0.0,
        "first_wave": first_wave if len(binds) >= first_wave else len(binds),
        "first_wave_s": (binds[min(first_wave, len(binds)) - 1] - t0) if binds else 0.0,
        "full": len(tracker.full), "median_full_s": statistics.median(waits) if waits else None,
        "occupancy": tracker.occupancy(t0, last_full), "partial_seen": len(tracker.partial_seen),
        "partial_left": len(partial_left), "steps": {k: tuple(v) for k, v in loop_stats(state).items()},
    }


def report(r: dict) -> bool:
    rate = r["placed"] / r["placed_s"] if r["placed_s"] else 0.0
    wave = r["first_wave"] / r["first_wave_s"] if r["first_wave_s"] else 0.0
    print(f"mode                 : {r['mode']}")
    print(f"burst                : {r['jobs']} jobs of 1-32 replicas, {r['pods']} pods x {GPUS_PER_NODE} GPUs on "
          f"{r['nodes']} nodes x {GPUS_PER_NODE} GPUs (created in {r['created_s']:.1f} s)")
    print(f"pods/s placed        : {wave:.0f} while the cluster fills ({r['first_wave']} pods in "
          f"{r['first_wave_s']:.1f} s from the first submission)")
    print(f"  overall            : {r['placed']} pods in {r['placed_s']:.1f} s = {rate:.0f} pods/s (waits for "
          "GPUs to free once full)")
    median = "n/a" if r["median_full_s"] is None else f"{r['median_full_s']:.1f} s"
    print(f"jobs fully placed    : {r['full']}/{r['jobs']}; median time to full placement {median}")
    print(f"GPU occupancy        : {100 * r['occupancy']:.1f} % while jobs waited")
    print(f"partial gangs        : {r['partial_seen']} seen, {r['partial_left']} left at the end")
    for step, (calls, secs) in r["steps"].items():
        print(f"time in {step:<13}: {secs:.1f} s over {calls} passes ({1000 * secs / max(calls, 1):.1f} ms/pass)")
    print(f"reference            : {KNAVIGATOR}")
    ok = wave >= TARGET_PODS_PER_SECOND and r["partial_seen"] == 0 and r["partial_left"] == 0
    print(f"target               : >= {TARGET_PODS_PER_SECOND} pods/s placed, no partial gang: "
          f"{'MET' if ok else 'NOT MET'}")
    return ok


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=("kube", "kueue", "volcano", "kai"), default="volcano")
    p.add_argument("--jobs", type=int, default=150)
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--min-seconds", type=float, default=3.0, help="shortest virtual run of a job")
    p.add_argument("--max-seconds", type=float, default=8.0, help="longest virtual run of a job")
    p.add_argument("--timeout", type=float, default=240.0, help="stop waiting for full placements after this")
    args = p.parse_args(argv)
    return 0 if report(asyncio.run(run(args))) else 1


if __name__ == "__main__":
    sys.exit(main())
