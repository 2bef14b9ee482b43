"""Fair shares of GPUs between queues, as pure functions on numbers (tested without a cluster).

- Volcano's ``proportion`` plugin: each queue *deserves* its guarantee, then the rest of the cluster is
  divided by ``weight`` among the queues that request more (water-filling: a queue never deserves more
  than it requests or than its capability; what it leaves goes to the others). A queue with a fixed
  ``deserved`` (the ``capacity`` plugin's field) keeps it.
- KAI's resource division (docs/fairness): level by level, every queue first gets its quota (up to what it
  requests), then what remains goes to the queues that want more, higher queue priority first, in
  proportion to ``overQuotaWeight``, never above a queue's limit or request. A parent's share is divided
  among its children the same way.

``weighted=False`` (the ``fairshare-ignored`` fault) keeps only guarantees and quotas: nothing beyond is
divided by weight.
"""

from __future__ import annotations

from dataclasses import dataclass

INF = float("inf")
EPS = 1e-9


@dataclass
class Claim:
    """One queue's claim on a pool: what it is sure of (``floor``), what it may reach (``cap``), its weight
    and priority."""

    name: str
    floor: float
    cap: float
    weight: float
    priority: int = 0


def water_fill(claims: list[Claim], amount: float) -> dict[str, float]:
    """Give each claim its floor (scaled down if the floors exceed ``amount``), then divide the rest by
    weight among the claims below their cap, highest priority first, until nothing is left or all are
    capped."""
    floors = {c.name: min(c.floor, c.cap) for c in claims}
    total_floor = sum(floors.values())
    if total_floor > amount + EPS:
        scale = amount / total_floor if total_floor else 0.0
        return {n: f * scale for n, f in floors.items()}
    share = dict(floors)
    remaining = amount - total_floor
    for prio in sorted({c.priority for c in claims}, reverse=True):
        group = [c for c in claims if c.priority == prio and share[c.name] < c.cap - EPS and c.weight > 0]
        while remaining > EPS and group:
            weights = sum(c.weight for c in group)
            given = 0.0
            for c in group:
                add = min(remaining * c.weight / weights, c.cap - share[c.name])
                share[c.name] += add
                given += add
            remaining -= given
            group = [c for c in group if share[c.name] < c.cap - EPS]
            if given <= EPS:
                break
    return share


@dataclass
class VolcanoQueueShare:
    name: str
    weight: int
    request: float
    guarantee: float = 0.0
    capability: float = INF
    deserved: float | None = None  # fixed (capacity plugin)


def volcano_deserved(queues: list[VolcanoQueueShare], total: float, weighted: bool = True) -> dict[str, float]:
    """Each queue's deserved GPUs (see module docstring)."""
    fixed = {q.name: float(q.deserved) for q in queues if q.deserved is not None}
    free = [q for q in queues if q.deserved is None]
    amount = max(0.0, total - sum(fixed.values()))
    claims = [Claim(q.name, q.guarantee, q.guarantee if not weighted else max(q.guarantee, min(q.request, q.capability)),
                    q.weight) for q in free]
    out = water_fill(claims, amount)
    out.update(fixed)
    return out


@dataclass
class KaiQueueShare:
    name: str
    parent: str | None
    quota: float  # -1: unlimited
    weight: float
    limit: float  # -1: unlimited
    priority: int
    request: float = 0.0


def kai_fair_shares(queues: list[KaiQueueShare], total: float, weighted: bool = True) -> dict[str, float]:
    """Each queue's fair share of ``total`` GPUs (top-level queues first, then each parent's children)."""
    children: dict[str | None, list[KaiQueueShare]] = {}
    for q in queues:
        children.setdefault(q.parent, []).append(q)
    requests = {q.name: q.request for q in queues}
    for parent in [q for q in queues if q.name in children]:
        requests[parent.name] = sum(requests[c.name] for c in children[parent.name])
    out: dict[str, float] = {}

    def divide(parent: str | None, amount: float) -> None:
        claims = []
        for q in children.get(parent, []):
            limit = INF if q.limit < 0 else q.limit
            want = min(requests[q.name], limit)
            quota = want if q.quota < 0 else min(q.quota, want)
            claims.append(Claim(q.name, quota, want if weighted else quota, q.weight, q.priority))
        out.update(water_fill(claims, amount))
        for q in children.get(parent, []):
            if q.name in children:
                divide(q.name, out[q.name])

    divide(None, total)
    return out


def saturation(allocated: float, share: float) -> float:
    """KAI's saturation ratio ``allocated / fairShare`` (infinite when the share is nothing)."""
    if share <= EPS:
        return INF if allocated > EPS else 0.0
    return allocated / share
