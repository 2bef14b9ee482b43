"""The tenant-isolation class's evidence tables, one typed row model each: the only place their columns are
written. The evidence writer takes each table's schema from its model (``evidence.tables.TABLES``); the class's
row builders (``rows.py``, ``fair_share.py``, ``reclaim_judge.py``) and the quota sampler (``quotas.py``
``sample_quotas``: ``QuotaReading.row``) build its rows as these models, and the suites under
``expectations/tenant_isolation.*`` and the report read the same column names. The shared-GPU probes' rows (memory
isolation, vGPU slices) are in ``evidence/sharing_tables.py``.

This module imports nothing of the package: it sits in the evidence layer, beneath everything that writes or
reads these tables (``tests/unit/structure/test_import_graph.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass
class QueueShare:
    """One tenant's share of a pool while the tenants competed, beside the share it was owed."""

    tenant: str
    pool: str | None = None
    weight: float | None = None
    guaranteed_gpus: float | None = None
    contended_seconds: float | None = None
    mean_gpus: float | None = None
    fair_gpus: float | None = None
    share: float | None = None
    fair_share: float | None = None
    share_error: float | None = None            # share - fair_share; empty when the tenants never competed


@dataclass
class ReclaimProbeRow:
    """The reclaim probe: the borrower's hold when the lender asked, and how soon the lender was served."""

    borrower: str
    lender: str
    pool: str | None = None
    borrower_submitted_at: datetime | None = None
    borrower_guaranteed_gpus: float | None = None
    borrower_gpus_at_submit: float | None = None
    borrowed_gpus: float | None = None
    lender_gpus: int | None = None
    free_gpus_at_submit: int | None = None
    needs_reclaim: bool | None = None
    submitted_at: datetime | None = None
    placed_at: datetime | None = None
    reclaim_seconds: float | None = None
    reclaimed: bool | None = None               # placed within max_reclaim_seconds; empty when none was owed
    borrower_pods_taken: int | None = None
    observed_seconds: float | None = None


@dataclass
class AccessProbe:
    """One cross-tenant attempt with the tenant's own identity, its access review and its audit record."""

    actor_tenant: str
    target_namespace: str
    action: str
    resource: str
    verb: str
    subresource: str | None = None
    name: str | None = None
    at: datetime | None = None
    http_status: int | None = None
    allowed: bool | None = None
    expected_allowed: bool | None = None
    access_review_allowed: bool | None = None
    message: str | None = None
    audit_matched: bool | None = None


@dataclass
class QuotaSample:
    """Usage against quota of one tenant at one moment."""

    ts: datetime
    tenant: str
    namespace: str
    resource: str
    hard: float | None = None
    used: float | None = None
    quota: str | None = None
    source: str | None = None


TABLES: dict[str, type] = {"queue_shares": QueueShare, "reclaim_probes": ReclaimProbeRow, "access_probes": AccessProbe,
                           "quota_samples": QuotaSample}
