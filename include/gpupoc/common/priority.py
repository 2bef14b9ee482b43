"""Where a scheduler orders workloads by priority.

kube-scheduler orders every pending pod of the cluster by priority and preempts across namespaces. Kueue,
Volcano and KAI first divide GPUs between queues (nominal quota, deserved share, fair share, borrowing and
reclaim) and order by priority only inside one queue; a tenant's lower-priority workload admitted while
another tenant's higher-priority one waits, or a reclaim that evicts a borrower of higher priority, is their
queue policy, judged by the gang, fair-share and reclaim checks, not a priority inversion.
"""

from __future__ import annotations

QUEUE_SCHEDULERS = frozenset({"kueue", "volcano", "kai"})


def priority_within_queue(adapter: str | None) -> bool:
    """True when ``adapter`` (the plan's scheduler adapter) compares priorities only inside a tenant's queue."""
    return str(adapter or "").lower() in QUEUE_SCHEDULERS
