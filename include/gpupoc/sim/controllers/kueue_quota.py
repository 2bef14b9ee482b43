"""Kueue's quota arithmetic for one resource (GPUs) and flavor, as pure functions on numbers.

A ClusterQueue in a cohort keeps ``nominal - lendingLimit`` for itself (its *guaranteed* quota; nothing
when no lending limit is set) and puts the rest into the cohort's pool; it may take from the pool up to
what it put in plus its ``borrowingLimit`` (no limit when unset). So, as Kueue's ``Available``:

    available = max(0, guaranteed - usage) + min(pool - pool usage, in_pool - usage_in_pool + borrowingLimit)

and ``potential_available`` is the same for an empty cluster (the "maximum capacity" of Kueue's
flavor-assignment message). A ClusterQueue borrows when its usage passes its nominal quota. Its dominant
resource share (fair sharing) is ``borrowed * 1000 / pool / weight`` (infinite with weight 0 while
borrowing), Kueue's ``DominantResourceShare`` and the ClusterQueue's ``status.fairSharing.weightedShare``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

INF = float("inf")


@dataclass
class QueueQuota:
    """One ClusterQueue's quota for the flavor it offers, and its current usage."""

    name: str
    flavor: str
    nominal: int
    cohort: str | None = None
    borrowing_limit: int | None = None
    lending_limit: int | None = None
    weight: float = 1.0
    usage: int = 0

    @property
    def guaranteed(self) -> int:
        return self.nominal - self.lending_limit if self.lending_limit is not None else 0

    @property
    def in_pool(self) -> int:
        return self.nominal - self.guaranteed


@dataclass
class QuotaTree:
    """The ClusterQueues and their cohorts (flat: a cohort is a set of ClusterQueues)."""

    queues: dict[str, QueueQuota] = field(default_factory=dict)

    def members(self, q: QueueQuota) -> list[QueueQuota]:
        if q.cohort is None:
            return [q]
        return [m for m in self.queues.values() if m.cohort == q.cohort and m.flavor == q.flavor]

    def pool(self, q: QueueQuota) -> int:
        """The cohort's lendable GPUs of the queue's flavor."""
        return sum(m.in_pool for m in self.members(q))

    def pool_usage(self, q: QueueQuota) -> int:
        return sum(max(0, m.usage - m.guaranteed) for m in self.members(q))

    def available(self, q: QueueQuota) -> int:
        """GPUs the queue may still admit now."""
        if q.cohort is None:
            return max(0, q.nominal - q.usage)
        local = max(0, q.guaranteed - q.usage)
        from_pool = self.pool(q) - self.pool_usage(q)
        if q.borrowing_limit is not None:
            from_pool = min(from_pool, q.in_pool - max(0, q.usage - q.guaranteed) + q.borrowing_limit)
        return local + max(0, from_pool)

    def potential_available(self, q: QueueQuota) -> int:
        """GPUs the queue could admit in an empty cluster (its maximum capacity)."""
        if q.cohort is None:
            return q.nominal
        from_pool = self.pool(q)
        if q.borrowing_limit is not None:
            from_pool = min(from_pool, q.in_pool + q.borrowing_limit)
        return q.guaranteed + from_pool

    def borrowed(self, q: QueueQuota, extra: int = 0) -> int:
        return max(0, q.usage + extra - q.nominal)

    def borrowing(self, q: QueueQuota, extra: int = 0) -> bool:
        return q.cohort is not None and self.borrowed(q, extra) > 0

    def share(self, q: QueueQuota, extra: int = 0) -> float:
        """The dominant resource share, weighted (see module docstring), with ``extra`` more usage."""
        borrowed = self.borrowed(q, extra)
        if q.cohort is None or borrowed == 0:
            return 0.0
        if q.weight == 0:
            return INF
        pool = self.pool(q)
        return INF if pool == 0 else borrowed * 1000 / pool / q.weight


def weighted_share(value: float) -> int:
    """``status.fairSharing.weightedShare`` (an integer; infinite shares as Kueue's max int64)."""
    return 2**63 - 1 if value == INF else int(value)
