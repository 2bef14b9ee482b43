"""Typed rows of the evidence tables. Each dataclass is one table; its pyarrow schema follows its fields. A test
class's own tables are its folder's (``classes/<class>/table.py``); ``TABLES`` names every table.

Times are UTC ``datetime`` (stored as ``timestamp[us, UTC]``); ``X | None`` fields may be empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gpupoc.classes.audit_trail.table import TABLES as AUDIT_TRAIL_TABLES
from gpupoc.classes.fault_recovery.table import TABLES as FAULT_RECOVERY_TABLES
from gpupoc.classes.queue_congestion.table import TABLES as QUEUE_CONGESTION_TABLES
from gpupoc.classes.tenant_isolation.table import TABLES as TENANT_ISOLATION_TABLES
from gpupoc.classes.utilization.table import TABLES as UTILIZATION_TABLES
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
class PlatformInfo:
    """One fact about the platform under test (version, scheduler, node count, GPU models...)."""

    key: str
    value: str | None = None
    source: str | None = None


TABLES: dict[str, type] = {
    "workload_runs": WorkloadRun,
    "queue_snapshots": QueueSnapshot,
    **QUEUE_CONGESTION_TABLES,
    **TENANT_ISOLATION_TABLES,
    **UTILIZATION_TABLES,
    **FAULT_RECOVERY_TABLES,
    **AUDIT_TRAIL_TABLES,
    "platform_info": PlatformInfo,
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
