"""Fair share: what each competing tenant got of a pool against what it was owed, while they competed.

A tenant is owed its guaranteed GPUs (as far as it asks for them), then the rest of the pool by weight
among the tenants that ask for more, each capped at what it asks (weighted max-min, the rule Kueue's fair
sharing, Volcano's proportion plugin and KAI's fair share all follow in their own units). What a tenant asks
at a moment is the GPUs of its attempts holding or waiting; the pool available to the competing tenants is
its capacity less what others hold. Only moments when the tenants asked for more than that count
(*contended*). ``share_rows`` gives per tenant the time-averaged share held and owed there, as fractions of
the pool, and their difference. Pure functions over ``WorkloadTimeline``.
"""

from __future__ import annotations

from datetime import datetime

from gpupoc.common.fair_share import EPS as _EPS
from gpupoc.classes.tenant_isolation.table import QueueShare
from gpupoc.common.fair_share import Owed, fair_allocation
from gpupoc.pipeline.intervals import segments
from gpupoc.pipeline.timelines import WorkloadTimeline

__all__ = ["Owed", "QueueShare", "fair_allocation", "share_rows"]


def share_rows(timelines: list[WorkloadTimeline], pool: str, capacity: int, owed: list[Owed],
               end: datetime) -> list[QueueShare]:
    """Per competing tenant: mean GPUs held and owed over the contended time in ``pool``, as shares."""
    in_pool = [t for t in timelines if t.pool == pool]
    names = {o.tenant for o in owed}
    held = {o.tenant: 0.0 for o in owed}
    fair = {o.tenant: 0.0 for o in owed}
    contended = 0.0
    for seg in segments(in_pool, end):
        demand = {n: 0.0 for n in names}
        others = 0.0
        for t in seg.holding:
            if t.tenant in names:
                demand[t.tenant] += t.gpus
            else:
                others += t.gpus
        for t in seg.waiting:
            if t.tenant in names:
                demand[t.tenant] += t.gpus
        available = max(0.0, capacity - others)
        if sum(demand.values()) <= available + _EPS or seg.seconds <= 0:
            continue
        contended += seg.seconds
        owed_now = fair_allocation(available, demand, owed)
        for t in seg.holding:
            if t.tenant in names:
                held[t.tenant] += t.gpus * seg.seconds
        for n in names:
            fair[n] += owed_now[n] * seg.seconds
    rows = []
    for o in owed:
        if contended <= 0:
            rows.append(QueueShare(o.tenant, pool, o.weight, o.guaranteed_gpus, 0.0, None, None, None, None, None))
            continue
        mean, owed_mean = held[o.tenant] / contended, fair[o.tenant] / contended
        share, fair_share = mean / capacity, owed_mean / capacity
        rows.append(QueueShare(o.tenant, pool, o.weight, o.guaranteed_gpus, round(contended, 3), round(mean, 3),
                             round(owed_mean, 3), round(share, 4), round(fair_share, 4),
                             round(share - fair_share, 4)))
    return rows
