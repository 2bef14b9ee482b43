"""The run's alerts table from the receiver's record or Prometheus' ALERTS."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from gpupoc.monitoring.results import Window
from gpupoc.classes.fault_recovery.alert_rows import alert_records, collect_alert_history

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=timezone.utc)


def note(status, alerts, at):
    return json.dumps({"receivedAt": at.isoformat(), "receiver": "gpupoc", "status": status, "alerts": alerts})


def alert(name, status, fp, ends="0001-01-01T00:00:00Z", **labels):
    return {"status": status, "labels": {"alertname": name, "severity": "warning", **labels},
            "annotations": {"summary": f"{name} fired"}, "startsAt": T0.isoformat(), "endsAt": ends,
            "fingerprint": fp}


def test_the_receiver_record_gives_each_alert_once_in_its_last_state_and_only_the_tenants(tmp_path):
    record = tmp_path / "alerts.jsonl"
    record.write_text("\n".join([
        note("firing", [alert("PodFailed", "firing", "a1", namespace="team-a", pod="p1")], T0 + timedelta(seconds=5)),
        note("firing", [alert("GpuXidError", "firing", "x1", Hostname="node-1")], T0 + timedelta(seconds=6)),
        note("firing", [alert("PodFailed", "firing", "o1", namespace="other", pod="q")], T0 + timedelta(seconds=7)),
        "{cut by a crash",
        note("resolved", [alert("PodFailed", "resolved", "a1", ends=(T0 + timedelta(seconds=30)).isoformat(),
                                namespace="team-a", pod="p1")], T0 + timedelta(seconds=31)),
    ]) + "\n")
    res = collect_alert_history(str(record), None, Window(T0, T0 + timedelta(minutes=5)))
    assert res.verified
    rows = alert_records(res, ["team-a"], ["node-1"])
    assert [(r.alertname, r.state, r.pod, r.node) for r in rows] == [
        ("GpuXidError", "firing", None, "node-1"), ("PodFailed", "resolved", "p1", None)]  # by start, then name
    assert rows[1].ends_at == T0 + timedelta(seconds=30) and rows[0].ends_at is None
    assert rows[1].summary == "PodFailed fired" and rows[1].source == str(record)


def test_no_source_or_an_empty_record_is_not_verified_and_names_what_was_tried(tmp_path):
    window = Window(T0, T0 + timedelta(minutes=5))
    none = collect_alert_history(None, None, window)
    assert not none.verified and "alert_receiver_record" in none.reason and "gpupoc stack up" in none.reason
    empty = tmp_path / "alerts.jsonl"
    empty.write_text("")
    res = collect_alert_history(str(empty), "http://127.0.0.1:9/", window)
    assert not res.verified and str(empty) in res.reason and "127.0.0.1:9" in res.reason
