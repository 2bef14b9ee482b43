"""Typed rows of the evidence tables. Each dataclass is one table; its pyarrow schema follows its fields. A test
class's own tables are its folder's (``classes/<class>/table.py``); ``TABLES`` names every table.

Times are UTC ``datetime`` (stored as ``timestamp[us, UTC]``); ``X | None`` fields may be empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gpupoc.classes.queue_congestion.table import TABLES as QUEUE_CONGESTION_TABLES
from gpupoc.evidence.cost_tables import COST_TABLES
from gpupoc.evidence.replay_tables import REPLAY_TABLES
from gpupoc.evidence.service_tables import SERVICE_TABLES
from gpupoc.evidence.sharing_tables import SHARING_TABLES
from gpupoc.evidence.startup_tables import STARTUP_TABLES


@dataclass
class WorkloadRun:
    """One submitted workload: its life from submission to the end, and the wait in between."""

    run_id: str
    test_class: str
    tenant: str
    namespace: str
    pod: str
    workload: str
    task_type: str | None = None
    priority_class: str | None = None
    priority: int | None = None
    gpus: int | None = None
    pool: str | None = None
    node: str | None = None
    submitted_at: datetime | None = None
    released_at: datetime | None = None
    scheduled_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    wait_seconds: float | None = None
    phase: str | None = None
    exit_code: int | None = None
    reason: str | None = None
    message: str | None = None
    attempt: int | None = None
    role: str | None = None
    scenario: str | None = None
    item: str | None = None                     # the wave item; an item has one row per attempt
    outcome: str | None = None                  # gpupoc.common.outcomes.WorkloadOutcome
    outcome_reason: str | None = None           # the platform's reason word for it
    outcome_message: str | None = None          # the platform's message
    outcome_by: str | None = None               # the preemptor, the deleting identity, the evicting component
    outcome_at: datetime | None = None
    outcome_source: str | None = None           # pod status, condition, event, audit log, admission, none
    outcome_explained: bool | None = None       # the platform's own records say why
    final_attempt: bool | None = None           # the item's last attempt
    submitted_by: str | None = None             # pipeline or platform (a controller's requeue)
    requeued_by_platform: bool | None = None    # preempted/evicted: the platform submitted the next attempt
    preempted_by_higher: bool | None = None     # preempted: the preemptor had a higher priority (None: unknown)
    preemptor: str | None = None                # preempted: ns/name of the preemptor, or what the platform named
    preemptor_priority: int | None = None
    preemptor_named_by: str | None = None       # the record that named the preemptor, or why none did
    preemption_judged: str | None = None        # preempted: judged, unresolved, other queue (pipeline/preemptors)
    gang: str | None = None                     # the gang (plan key) of a replica of a multi-pod workload
    gang_min_available: int | None = None       # pods of that gang that must run together
    task_outcome: str | None = None             # what the attempt's wave task decided (None: it decided nothing)


@dataclass
class QueueSnapshot:
    """What the platform said about a waiting pod at one moment."""

    ts: datetime
    pod: str
    namespace: str
    phase: str | None = None
    reason: str | None = None
    message: str | None = None
    position: int | None = None
    eta_seconds: float | None = None
    source: str | None = None
    tenant: str | None = None
    queue: str | None = None


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


@dataclass
class UtilizationRow:
    """GPU use of one pod on one GPU in one time bucket, beside what was allocated."""

    bucket: datetime
    namespace: str | None = None
    pod: str | None = None
    tenant: str | None = None
    task_type: str | None = None
    pool: str | None = None
    node: str | None = None
    gpu_uuid: str | None = None
    util_avg: float | None = None
    util_p95: float | None = None
    mem_mib_avg: float | None = None
    allocated_gpu_hours: float | None = None
    used_gpu_hours: float | None = None
    samples: int | None = None
    serving: bool | None = None          # the pod is a replica of one of the class's online services


@dataclass
class FailureRecord:
    """One provoked failure: trigger, platform behaviour, what user and operator saw, recovery."""

    scenario: str
    trigger: str | None = None
    pod: str | None = None
    namespace: str | None = None
    platform_behaviour: str | None = None
    user_visible: str | None = None
    operator_visible: str | None = None
    recovery: str | None = None
    logs_readable: bool | None = None
    events: str | None = None
    airflow_retries: int | None = None
    platform_restarts: int | None = None
    alerts: str | None = None
    gpu_release_seconds: float | None = None
    verified: bool | None = None
    reason: str | None = None


@dataclass
class AuditMatch:
    """One action of the pipeline's ledger and the platform audit event that records it (if any)."""

    ledger_action: str
    actor: str | None = None
    verb: str | None = None
    resource: str | None = None
    namespace: str | None = None
    name: str | None = None
    at: datetime | None = None
    audit_event_id: str | None = None
    matched: bool | None = None
    delay_seconds: float | None = None
    decision: str | None = None
    code: int | None = None


@dataclass
class ArtifactRecord:
    """An artifact handed over from producer to consumer: where, what hash, who."""

    path: str
    sha256: str | None = None
    producer: str | None = None
    consumer: str | None = None
    namespace: str | None = None
    size_bytes: int | None = None
    verified: bool | None = None


@dataclass
class PlatformInfo:
    """One fact about the platform under test (version, scheduler, node count, GPU models...)."""

    key: str
    value: str | None = None
    source: str | None = None


@dataclass
class AlertRecord:
    """One alert seen during the run (firing or resolved), from Prometheus, Alertmanager or the receiver."""

    alertname: str
    state: str | None = None
    severity: str | None = None
    namespace: str | None = None
    pod: str | None = None
    node: str | None = None
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    summary: str | None = None
    source: str | None = None


@dataclass
class LedgerRow:
    """One action the pipeline took (who, what, when), as its own ledger recorded it."""

    at: datetime
    actor: str
    verb: str
    resource: str | None = None
    subresource: str | None = None
    namespace: str | None = None
    name: str | None = None
    http_status: int | None = None
    purpose: str | None = None
    task: str | None = None


TABLES: dict[str, type] = {
    "workload_runs": WorkloadRun,
    "queue_snapshots": QueueSnapshot,
    **QUEUE_CONGESTION_TABLES,
    "queue_shares": QueueShare,
    "reclaim_probes": ReclaimProbeRow,
    "access_probes": AccessProbe,
    "quota_samples": QuotaSample,
    "utilization": UtilizationRow,
    "failure_records": FailureRecord,
    "audit_matches": AuditMatch,
    "artifacts": ArtifactRecord,
    "platform_info": PlatformInfo,
    "alerts": AlertRecord,
    "ledger": LedgerRow,
    **REPLAY_TABLES,
    **STARTUP_TABLES,
    **SHARING_TABLES,
    **SERVICE_TABLES,
    **COST_TABLES,
}


def platform_rows(info: dict, source: str, prefix: str = "") -> list[PlatformInfo]:
    """Flatten a nested mapping (``{"version": {"gitVersion": ...}}``) into ``platform_info`` rows
    keyed ``version.gitVersion``; lists are kept as JSON text."""
    import json

    rows: list[PlatformInfo] = []
    for key in sorted(info, key=str):
        value = info[key]
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            rows += platform_rows(value, source, prefix=f"{name}.")
        else:
            text = json.dumps(value, sort_keys=True) if isinstance(value, (list, tuple)) else \
                (None if value is None else str(value))
            rows.append(PlatformInfo(key=name, value=text, source=source))
    return rows
