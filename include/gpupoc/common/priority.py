"""Where a scheduler orders workloads by priority.

kube-scheduler orders every pending pod of the cluster by priority and preempts across namespaces. Kueue,
Volcano and KAI first divide GPUs between queues (nominal quota, deserved share, fair share, borrowing and
reclaim) and order by priority only inside one queue; a tenant's lower-priority workload admitted while
another tenant's higher-priority one waits, or a reclaim that evicts a borrower of higher priority, is their
queue policy, judged by the gang, fair-share and reclaim checks, not a priority inversion.

The same three place a gang whole: it asks its ``min_available`` pods' GPUs at once and reaches the queue
when its last pod exists, so a smaller workload of lower priority that fits a gap the gang cannot use is
backfill, not an inversion. kube-scheduler places each pod alone, so there a gang's pod is judged alone.
"""

from __future__ import annotations

QUEUE_SCHEDULERS = frozenset({"kueue", "volcano", "kai"})


def _queue_scheduler(adapter: str | None) -> bool:
    return str(adapter or "").lower() in QUEUE_SCHEDULERS


def priority_within_queue(adapter: str | None) -> bool:
    """True when ``adapter`` (the plan's scheduler adapter) compares priorities only inside a tenant's queue."""
    return _queue_scheduler(adapter)


def gangs_placed_whole(adapter: str | None, gangs: str | None = None) -> bool:
    """True when ``adapter``'s scheduler places a gang as one unit (Kueue, Volcano, KAI), or kube-scheduler's
    GangScheduling plugin does (``gangs``: the plan's ``platform.options.gangs`` is ``workload-api``)."""
    return _queue_scheduler(adapter) or gangs == "workload-api"
