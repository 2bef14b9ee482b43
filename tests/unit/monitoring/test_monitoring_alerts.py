"""monitoring/alerts: episodes from ALERTS and the receiver's record of every notification."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from gpupoc.exceptions import SourceUnavailable
from gpupoc.monitoring import alerts
from gpupoc.monitoring.promclient import PrometheusClient
from gpupoc.monitoring.results import Window

T0 = 1_800_000_000.0


class FakeProm(PrometheusClient):
    def __init__(self, result=None, fail=False):
        super().__init__("http://prom.test:9090")
        self.result, self.fail = result or [], fail

    def query_range(self, expr, start, end, step):
        if self.fail:
            raise SourceUnavailable(f"{self.url}/api/v1/query_range", "unreachable: refused", "start it")
        assert expr == "ALERTS"
        return self.result


def _w(seconds=600, step=5.0):
    return Window(datetime.fromtimestamp(T0, timezone.utc), datetime.fromtimestamp(T0 + seconds, timezone.utc), step)


def test_alerts_series_become_episodes_split_at_gaps():
    firing = {"__name__": "ALERTS", "alertname": "GpuNodeNotReady", "alertstate": "firing", "node": "training-node-2",
              "severity": "critical"}
    times = [T0 + 5 * i for i in range(4)] + [T0 + 100 + 5 * i for i in range(3)]
    res = alerts.alerts_from_prometheus(FakeProm([{"metric": firing, "values": [[t, "1"] for t in times]}]), _w())
    assert res.verified
    df = res.frame
    assert len(df) == 2
    assert list(df["samples"]) == [4, 3]
    assert df.iloc[0]["node"] == "training-node-2" and df.iloc[0]["severity"] == "critical"
    assert df.iloc[0]["start"].timestamp() == T0 and df.iloc[0]["end"].timestamp() == T0 + 15
    assert json.loads(df.iloc[0]["labels"]) == {"node": "training-node-2", "severity": "critical"}


def test_no_alerts_in_window_is_not_verified():
    res = alerts.alerts_from_prometheus(FakeProm([]), _w())
    assert not res.verified and "no ALERTS series" in res.reason


def test_prometheus_down_is_not_verified_with_the_url():
    res = alerts.alerts_from_prometheus(FakeProm(fail=True), _w())
    assert not res.verified and res.source.endswith("/api/v1/query_range") and "refused" in res.reason


def _note(status, alert_status, received, **labels):
    return {"version": "4", "status": status, "receiver": "gpupoc-webhook", "receivedAt": received,
            "alerts": [{"status": alert_status, "labels": {"alertname": "GpuXidError", "severity": "critical",
                                                           **labels},
                        "annotations": {"summary": "XID 79 on GPU 0 of training-node-2"},
                        "startsAt": "2026-11-30T07:00:00Z", "endsAt": "0001-01-01T00:00:00Z",
                        "fingerprint": "abc"}]}


def test_receiver_record_keeps_firing_and_resolved(tmp_path):
    rec = tmp_path / "alerts.jsonl"
    lines = [_note("firing", "firing", "2026-11-30T07:00:03.000001Z", Hostname="training-node-2"),
             _note("resolved", "resolved", "2026-11-30T07:05:00.5Z", Hostname="training-node-2")]
    rec.write_text("\n".join(json.dumps(x) for x in lines) + "\n{truncated\n")
    res = alerts.alerts_from_receiver(rec)
    assert res.verified
    assert list(res.frame["status"]) == ["firing", "resolved"]
    assert set(res.frame["hostname"]) == {"training-node-2"}
    assert res.frame.iloc[1]["received_at"] == datetime(2026, 11, 30, 7, 5, 0, 500000, tzinfo=timezone.utc)
    window = Window(datetime(2026, 11, 30, 7, 4, tzinfo=timezone.utc), datetime(2026, 11, 30, 7, 6, tzinfo=timezone.utc))
    only_resolved = alerts.alerts_from_receiver(rec, window)
    assert list(only_resolved.frame["status"]) == ["resolved"]


def test_receiver_record_missing_or_empty_window_is_not_verified(tmp_path):
    missing = alerts.alerts_from_receiver(tmp_path / "nope.jsonl")
    assert not missing.verified and "not found" in missing.reason
    rec = tmp_path / "alerts.jsonl"
    rec.write_text(json.dumps(_note("firing", "firing", "2026-11-30T07:00:03Z")) + "\n")
    later = Window(datetime(2026, 12, 1, tzinfo=timezone.utc), datetime(2026, 12, 2, tzinfo=timezone.utc))
    res = alerts.alerts_from_receiver(rec, later)
    assert not res.verified and "no notifications" in res.reason


def test_alertmanager_unreachable_is_not_verified():
    res = alerts.alerts_from_alertmanager("http://127.0.0.1:9", timeout=2)
    assert not res.verified and res.source == "http://127.0.0.1:9/api/v2/alerts"
