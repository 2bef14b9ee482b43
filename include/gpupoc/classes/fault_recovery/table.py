"""The fault-recovery class's evidence tables, one typed row model each: the only place their columns are
written. The evidence writer takes each table's schema from its model (``evidence.tables.TABLES``); the class's
row builders (``rows.py`` ``failure_records``, ``alert_rows.py``) build its rows as these models, and the suites
under ``expectations/fault_recovery.*`` and the report read the same column names.

This module imports nothing of the package: it sits in the evidence layer, beneath everything that writes or
reads these tables (``tests/unit/structure/test_import_graph.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


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


TABLES: dict[str, type] = {"failure_records": FailureRecord, "alerts": AlertRecord}
