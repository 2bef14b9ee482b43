"""What the plan's evidence receivers refused during a run: the requests without their token that the audit
webhook and the alert receiver answered 401 (``gpupoc.monitoring.intake_auth``), for the run's manifest and
its report."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gpupoc.monitoring.intake_auth import refused

if TYPE_CHECKING:
    from gpupoc.plan.document import Plan

AUDIT_WEBHOOK = "audit_webhook"
ALERT_RECEIVER = "alert_receiver"


def receiver_records(plan: "Plan") -> dict[str, Path]:
    """The records of the receivers the plan reads: the audit webhook's (an ``evidence_sources.audit`` of kind
    ``webhook``) and the alert receiver's (the plan's, else the local stack's)."""
    from gpupoc.monitoring.sources import resolve_sources

    out: dict[str, Path] = {}
    spec = plan.evidence_sources.audit_spec
    if spec is not None and spec.kind == "webhook":
        out[AUDIT_WEBHOOK] = plan.resolve_path(spec.record)
    src = resolve_sources(plan_sources=plan.evidence_sources, use_airflow=False)
    if src.receiver_record:
        out[ALERT_RECEIVER] = plan.resolve_path(src.receiver_record)
    return out


def intake_refusals(records: dict[str, Path], start: datetime | None, end: datetime | None) -> dict[str, dict]:
    """Per receiver: its record, the requests it refused between ``start`` and ``end`` and whether it required
    its token (both None when it keeps no refusal count)."""
    out = {}
    for name, record in records.items():
        count = refused(record, start, end)
        out[name] = {"record": str(record), "refused": count.refused if count else None,
                     "authenticated": count.authenticated if count else None}
    return out
