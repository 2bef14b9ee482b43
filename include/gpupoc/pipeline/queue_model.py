"""The wait a user could have expected: the queue at release replayed with the plan's durations.

A pure estimate, shown beside each actual wait: per pool, the workloads ready to run are served in priority
order (higher first, then earlier ready, then earlier submitted), each starts as soon as its pool has enough
free GPUs, as kube-scheduler binds any pod that fits, and runs for its planned duration. Node fragmentation,
preemption and the platform's own delays are left out on purpose: the difference between expected and actual
wait is what the platform added (or saved).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from datetime import datetime

from gpupoc.pipeline.timelines import WorkloadTimeline


def expected_waits(timelines: list[WorkloadTimeline], durations: dict[str, float],
                   pool_gpus: dict[str, int]) -> dict[tuple[str, str], float]:
    """(namespace, pod) -> expected wait in seconds; ``durations`` by workload key (the wave item)."""
    out: dict[tuple[str, str], float] = {}
    for pool, gpus in pool_gpus.items():
        ready = [t for t in timelines if t.pool == pool and t.ready_at is not None]
        if ready:
            out.update(_PoolQueue(ready, gpus, durations).serve())
    return out


@dataclass
class _Queued:
    """One workload of a pool's queue: when it is ready (seconds from the pool's first) and its serving order."""

    timeline: WorkloadTimeline
    ready_s: float
    order: tuple


@dataclass
class _PoolQueue:
    """One pool served event by event: at each moment, the ready workloads in serving order start while they
    fit (a workload that does not fit holds no one behind it), then time moves to the next end or arrival.
    The ready workloads wait in one heap per GPU count, so each moment costs the starts it makes, not the
    length of the queue (10,000 workloads: the whole wave's queue scanned at every moment took a minute)."""

    timelines: list[WorkloadTimeline]
    gpus: int
    durations: dict[str, float]
    running: list[tuple[float, int]] = field(default_factory=list)  # heap of (end, gpus)
    ended_at_start: int = 0  # GPUs of workloads that end the moment they start: free from the next moment
    by_size: dict[int, list] = field(default_factory=dict)  # GPU count -> heap of (order, n, _Queued)

    def serve(self) -> dict[tuple[str, str], float]:
        t0 = min(t.ready_at for t in self.timelines)
        queued = [_Queued(t, _s(t.ready_at, t0), (-t.priority, _s(t.ready_at, t0),
                                                   _s(t.submitted_at or t.ready_at, t0), t.pod))
                  for t in self.timelines]
        arrivals = sorted(range(len(queued)), key=lambda i: (queued[i].ready_s, i))
        out: dict[tuple[str, str], float] = {}
        now, nxt, free = 0.0, 0, self.gpus
        while True:
            free += self.ended_at_start
            self.ended_at_start = 0
            while self.running and self.running[0][0] <= now:
                free += heapq.heappop(self.running)[1]
            while nxt < len(arrivals) and queued[arrivals[nxt]].ready_s <= now:
                q = queued[arrivals[nxt]]
                heapq.heappush(self.by_size.setdefault(q.timeline.gpus, []), (q.order, arrivals[nxt], q))
                nxt += 1
            free = self._start_fitting(now, free, out)
            upcoming = [self.running[0][0]] if self.running else []
            if nxt < len(arrivals):
                upcoming.append(queued[arrivals[nxt]].ready_s)
            if not upcoming or not (nxt < len(arrivals) or any(self.by_size.values())):
                return out  # all served, or only workloads larger than their pool are left
            now = min(upcoming)

    def _start_fitting(self, now: float, free: int, out: dict) -> int:
        """Start, in serving order, every ready workload that fits what is free; return what is left free."""
        while True:
            heads = [h[0] for size, h in self.by_size.items() if h and size <= free]
            if not heads:
                return free
            _, _, q = min(heads, key=lambda h: (h[0], h[1]))
            heapq.heappop(self.by_size[q.timeline.gpus])
            t = q.timeline
            out[(t.namespace, t.pod)] = now - q.ready_s
            end = now + float(self.durations.get(t.workload_key, 0.0))
            if end > now:
                heapq.heappush(self.running, (end, t.gpus))
            else:
                self.ended_at_start += t.gpus
            free -= t.gpus


def _s(at: datetime, t0: datetime) -> float:
    return (at - t0).total_seconds()
