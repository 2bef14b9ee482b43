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


def test_the_plans_receivers_are_its_webhook_audit_source_and_its_alert_record(tmp_path):
    import yaml

    from gpupoc.monitoring.intake_count import receiver_records
    from gpupoc.pipeline.common import repo_root
    from gpupoc.plan import load_plan

    doc = yaml.safe_load((repo_root() / "plans" / "default.yaml").read_text())
    sources = {k: v for k, v in doc["evidence_sources"].items() if k != "audit_log_path"}
    doc["evidence_sources"] = sources | {"audit": {"kind": "webhook", "record": "audit/audit-events.jsonl"},
                                         "alert_receiver_record": "alerts/alerts.jsonl"}
    (tmp_path / "kubeconfig").write_text("apiVersion: v1\nkind: Config\n")
    doc["platform"].update(kubeconfig=str(tmp_path / "kubeconfig"), simulated=True)
    (tmp_path / "plan.yaml").write_text(yaml.safe_dump(doc))
    got = receiver_records(load_plan(tmp_path / "plan.yaml"))
    assert got == {"audit_webhook": tmp_path / "audit" / "audit-events.jsonl",
                   "alert_receiver": tmp_path / "alerts" / "alerts.jsonl"}
