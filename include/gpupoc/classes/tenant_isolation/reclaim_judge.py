"""Borrowed quota taken back: the figures of one reclaim probe (a ``reclaim_probes`` row).

The borrower holds more of the pool than its guarantee (GPUs another tenant lent it, by not using them);
then the lender asks for GPUs within its own guarantee. If the free GPUs cannot hold the lender's pods (per
node, first fit), the platform owes it a reclaim: the lender's pods must get their GPUs within the plan's
``max_reclaim_seconds``, which only happens in time if the platform preempts or evicts borrowed work.
Pure functions: the probe (``gpupoc.classes.tenant_isolation.reclaim``) reads the cluster.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from gpupoc.classes.tenant_isolation.table import ReclaimProbeRow
from gpupoc.pipeline.k8s import pod_gpus

ACTIVE = ("Pending", "Running")


def held_by_node(pods: list[dict]) -> Counter:
    """GPUs held per node by the pods bound and not ended."""
    out: Counter = Counter()
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if node and ((p.get("status") or {}).get("phase") or "Pending") in ACTIVE:
            out[node] += pod_gpus(p)
    return out


def fits_free(asks: list[int], free: dict[str, int]) -> bool:
    """Whether pods asking ``asks`` GPUs each fit the free GPUs per node (largest first, first fit)."""
    left = dict(free)
    for g in sorted(asks, reverse=True):
        node = next((n for n, f in sorted(left.items(), key=lambda kv: kv[1]) if f >= g), None)
        if node is None:
            return False
        left[node] -= g
    return True


def reclaim_row(*, borrower: str, lender: str, pool: str, borrower_guaranteed: float, borrower_held: float,
                lender_asks: list[int], free: dict[str, int], submitted_at: datetime | None,
                placed: list[datetime | None], taken: int, observed_seconds: float,
                max_reclaim_seconds: float) -> ReclaimProbeRow:
    """The probe's row: ``placed`` holds each lender pod's placement time (None: never placed)."""
    needs = borrower_held > borrower_guaranteed and not fits_free(lender_asks, free)
    placed_at = max(placed) if placed and all(placed) else None
    seconds = (placed_at - submitted_at).total_seconds() if placed_at and submitted_at else observed_seconds
    return ReclaimProbeRow(
        borrower=borrower, lender=lender, pool=pool, borrower_guaranteed_gpus=borrower_guaranteed,
        borrower_gpus_at_submit=borrower_held, borrowed_gpus=max(0.0, borrower_held - borrower_guaranteed),
        lender_gpus=sum(lender_asks), free_gpus_at_submit=sum(free.values()), needs_reclaim=needs,
        submitted_at=submitted_at, placed_at=placed_at, reclaim_seconds=round(max(0.0, seconds), 3),
        reclaimed=(placed_at is not None and seconds <= max_reclaim_seconds) if needs else None,
        borrower_pods_taken=taken, observed_seconds=round(observed_seconds, 3))
