"""The wait a user could have expected: the queue at release replayed with the plan's durations.

A pure estimate, shown beside each actual wait: per pool, the workloads ready to run are served in priority
order (higher first, then earlier ready, then earlier submitted), each starts as soon as its pool has enough
free GPUs, as kube-scheduler binds any pod that fits, and runs for its planned duration. Node fragmentation,
preemption and the platform's own delays are left out on purpose: the difference between expected and actual
wait is what the platform added (or saved).
"""

from __future__ import annotations

from datetime import datetime

from gpupoc.pipeline.timelines import WorkloadTimeline


def expected_waits(timelines: list[WorkloadTimeline], durations: dict[str, float],
                   pool_gpus: dict[str, int]) -> dict[tuple[str, str], float]:
    """(namespace, pod) -> expected wait in seconds; ``durations`` by workload key (the wave item)."""
    out: dict[tuple[str, str], float] = {}
    for pool, gpus in pool_gpus.items():
        ready = [t for t in timelines if t.pool == pool and t.ready_at is not None]
        if not ready:
            continue
        t0 = min(t.ready_at for t in ready)
        order = sorted(ready, key=lambda t: (-t.priority, _s(t.ready_at, t0), _s(t.submitted_at or t.ready_at, t0),
                                             t.pod))
        running: list[tuple[float, int]] = []  # (end, gpus)
        waiting = list(order)
        now = 0.0
        while waiting:
            running = [(end, g) for end, g in running if end > now]
            free = gpus - sum(g for _, g in running)
            for t in list(waiting):
                if _s(t.ready_at, t0) <= now and t.gpus <= free:
                    out[(t.namespace, t.pod)] = now - _s(t.ready_at, t0)
                    running.append((now + float(durations.get(t.workload_key, 0.0)), t.gpus))
                    free -= t.gpus
                    waiting.remove(t)
            if not waiting:
                break
            upcoming = [end for end, _ in running if end > now] + [_s(t.ready_at, t0) for t in waiting
                                                                  if _s(t.ready_at, t0) > now]
            if not upcoming:  # a workload larger than its pool never starts
                break
            now = min(upcoming)
    return out


def _s(at: datetime, t0: datetime) -> float:
    return (at - t0).total_seconds()
