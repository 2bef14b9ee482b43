"""Gang atomicity: how each gang of the wave was placed, from its replicas' timelines.

A gang is *partly placed* while some of its replicas hold GPUs, fewer than ``min_available`` do, and another
replica waits: the ones placed cannot progress (a distributed job starts when all its ranks run), so their
GPUs are held idle. Per gang (``gang_rows``):

- ``partial_seconds`` and ``idle_gpu_seconds``: time partly placed and the GPUs held meanwhile;
- ``partial_while_others_waited_seconds``: the part of it during which another workload of the pool waited
  for GPUs (the harm: GPUs held idle that another could have used);
- ``time_to_full_seconds``: from the gang's release until every replica got its GPUs (to the end of the
  observation when one never did, ``fully_placed`` false);
- ``longest_stall_seconds``: the longest time it stayed partly placed while no attempt of its pool was
  placed or ended: a deadlock when it exceeds the plan's ``deadlock_seconds``.
Pure functions over ``WorkloadTimeline`` (``gang`` and ``gang_size`` set for replicas of a gang); each gang's
row is the class's ``gang_placements`` row model (``classes/queue_congestion/table.py``), its adapter left to
the collector.
"""

from __future__ import annotations

from datetime import datetime

from gpupoc.classes.queue_congestion.table import GangPlacement
from gpupoc.pipeline.intervals import segments
from gpupoc.pipeline.timelines import WorkloadTimeline


def _r(x: float) -> float:
    return round(x, 3)


def gang_row(gang: str, members: list[WorkloadTimeline], pool: list[WorkloadTimeline], end: datetime) -> GangPlacement:
    """The row of one gang; ``members`` are its replicas' attempts, ``pool`` every attempt of its pool."""
    first = members[0]
    need = max(1, first.gang_size)
    replicas = len({(t.namespace, t.workload_key) for t in members})
    released = min((t.ready_at for t in members if t.ready_at), default=None)
    placed_first: dict[str, datetime] = {}
    for t in members:
        if t.scheduled_at is not None:
            key = t.workload_key
            placed_first[key] = min(placed_first.get(key, t.scheduled_at), t.scheduled_at)
    everyone = len(placed_first) == replicas
    all_placed = max(placed_first.values()) if everyone else None
    mine = set(map(id, members))
    partial = others = idle = stall = longest = 0.0
    full_at = None
    for seg in segments(pool, end):
        held = [t for t in seg.holding if id(t) in mine]
        waiting = any(id(t) in mine for t in seg.waiting)
        if full_at is None and len(held) >= need:
            full_at = seg.start
        if held and len(held) < need and waiting:
            partial += seg.seconds
            idle += seg.seconds * sum(t.gpus for t in held)
            if any(id(t) not in mine for t in seg.waiting):
                others += seg.seconds
            stall = seg.seconds if seg.progress_at_start and stall else stall + seg.seconds
            longest = max(longest, stall)
        else:
            stall = 0.0
    ttf_end = all_placed or end
    return GangPlacement(
        gang=gang, tenant=first.tenant, namespace=first.namespace, pool=first.pool,
        priority_class=first.priority_class, replicas=replicas, min_available=need, gpus_per_pod=first.gpus,
        attempts=len(members), released_at=released, first_placed_at=min(placed_first.values(), default=None),
        full_at=full_at, all_placed_at=all_placed, fully_placed=full_at is not None,
        time_to_full_seconds=_r(max(0.0, (ttf_end - released).total_seconds())) if released else None,
        partial_seconds=_r(partial), partial_while_others_waited_seconds=_r(others), idle_gpu_seconds=_r(idle),
        longest_stall_seconds=_r(longest))


def gang_rows(timelines: list[WorkloadTimeline], end: datetime) -> list[GangPlacement]:
    """One row per gang of the wave, in order of release (``end``: when observation stopped)."""
    gangs: dict[str, list[WorkloadTimeline]] = {}
    for t in timelines:
        if t.gang:
            gangs.setdefault(t.gang, []).append(t)
    rows = []
    for gang, members in gangs.items():
        pool = [t for t in timelines if t.pool == members[0].pool]
        rows.append(gang_row(gang, members, pool, end))
    return sorted(rows, key=lambda r: (r.released_at is None, r.released_at or end, r.gang))
