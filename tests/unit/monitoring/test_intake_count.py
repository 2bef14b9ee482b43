"""monitoring/intake_count: the plan's receivers' records, and what each refused in a run's window."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from gpupoc.monitoring.intake_auth import IntakeAuth, RefusalLog
from gpupoc.monitoring.intake_count import intake_refusals

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def test_each_receiver_reports_its_refusals_in_the_window_and_an_unknown_one_none(tmp_path):
    audit, alerts = tmp_path / "audit" / "audit-events.jsonl", tmp_path / "alerts.jsonl"
    log = RefusalLog(audit)
    log.started(IntakeAuth(token="t"), at=T0)
    log.add("10.0.0.9", "/audit", "no bearer token", at=T0 + timedelta(minutes=1))
    log.add("10.0.0.9", "/audit", "no bearer token", at=T0 + timedelta(hours=2))
    got = intake_refusals({"audit_webhook": audit, "alert_receiver": alerts}, T0, T0 + timedelta(hours=1))
    assert got["audit_webhook"] == {"record": str(audit), "refused": 1, "authenticated": True}
    assert got["alert_receiver"] == {"record": str(alerts), "refused": None, "authenticated": None}
