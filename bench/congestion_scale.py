"""How the evidence of a congestion wave scales: the bottleneck reconstruction, the expected waits and the
attempts' outcomes for waves of N pods observed every 3 s (synthetic: one 8-GPU node per 8 one-GPU pods of
a quarter of the wave, so three quarters wait; every pod waits at most 60 snapshots). Prints seconds per step.

    .venv/bin/python bench/congestion_scale.py [--sizes 200 1000 3000]
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime, timedelta, timezone

from gpupoc.pipeline.attempts import Evidence, gather
from gpupoc.classes.queue_congestion.reconstruct import reconstruct
from gpupoc.pipeline.queue_model import expected_waits
from gpupoc.pipeline.timelines import Capacity, Observation, WorkloadTimeline
from gpupoc.podspec import labels as L

T0 = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)
MSG = "0/9 nodes are available: 9 Insufficient nvidia.com/gpu."


def wave(n: int, interval: float = 3.0):
    nodes = max(1, n // 32)
    cap = Capacity(pool_gpus={"training": nodes * 8}, tenant_quota={"t": n},
                   node_gpus={f"n{i}": 8 for i in range(nodes)}, node_pool={f"n{i}": "training" for i in range(nodes)})
    timelines, obs, pods = [], [], []
    rounds = max(1, n // (nodes * 8))
    for i in range(n):
        start = (i // (nodes * 8)) * 30.0
        t = WorkloadTimeline(workload_key=f"w{i}", pod=f"p{i}", namespace="t", tenant="t", pool="training",
                             priority_class="p", priority=1000 - i % 3, gpus=1, submitted_at=T0, released_at=T0,
                             scheduled_at=T0 + timedelta(seconds=start), finished_at=T0 + timedelta(seconds=start + 30))
        timelines.append(t)
        pods.append({"metadata": {"name": f"p{i}", "namespace": "t", "annotations": {L.ITEM: f"w{i}"},
                                  "creationTimestamp": "2026-03-02T09:00:00Z"},
                     "status": {"phase": "Succeeded"}})
    for k in range(int(rounds * 30 / interval)):
        at = T0 + timedelta(seconds=k * interval)
        for i, t in enumerate(timelines):
            running = t.scheduled_at <= at < t.finished_at
            if at < t.finished_at:
                obs.append(Observation(taken_at=at, pod=t.pod, namespace="t", phase="Running" if running else "Pending",
                                       node=f"n{(i % (nodes * 8)) // 8}" if running else None,
                                       reason=None if running else "Unschedulable", message=None if running else MSG))
    return timelines, obs, cap, pods


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[200, 1000, 3000])
    args = ap.parse_args()
    print(f"{'pods':>6} {'observations':>13} {'reconstruct s':>14} {'expected waits s':>17} {'attempts s':>11}")
    for n in args.sizes:
        timelines, obs, cap, pods = wave(n)
        t = time.perf_counter()
        reconstruct(timelines, obs, cap)
        rec = time.perf_counter() - t
        t = time.perf_counter()
        expected_waits(timelines, {f"w{i}": 30.0 for i in range(n)}, cap.pool_gpus)
        exp = time.perf_counter() - t
        t = time.perf_counter()
        gather({f"w{i}": "t" for i in range(n)}, pods, {}, [], Evidence())
        att = time.perf_counter() - t
        print(f"{n:>6} {len(obs):>13} {rec:>14.2f} {exp:>17.2f} {att:>11.2f}")


if __name__ == "__main__":
    main()
