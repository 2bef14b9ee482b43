"""monitoring/receiver: every webhook notification is appended as one JSON line."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from gpupoc.monitoring import receiver


@pytest.fixture
def served(tmp_path):
    record = tmp_path / "alerts.jsonl"
    httpd = receiver.serve("127.0.0.1", 0, record)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", record
    httpd.shutdown()
    httpd.server_close()


def _post(url, body: bytes):
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=5) as resp:
        return resp.status


def test_notifications_are_appended_with_receipt_time(served):
    url, record = served
    for status in ("firing", "resolved"):
        note = {"version": "4", "status": status, "receiver": "gpupoc-webhook",
                "alerts": [{"status": status, "labels": {"alertname": "GpuXidError"}}]}
        assert _post(url + "/alerts", json.dumps(note).encode()) == 200
    lines = [json.loads(x) for x in record.read_text().splitlines()]
    assert [x["status"] for x in lines] == ["firing", "resolved"]
    assert all(x["receivedAt"].endswith("Z") and x["path"] == "/alerts" for x in lines)
    with urllib.request.urlopen(url + "/notifications", timeout=5) as resp:
        assert len(json.loads(resp.read())) == 2
    with urllib.request.urlopen(url + "/-/healthy", timeout=5) as resp:
        assert resp.status == 200


def test_non_json_body_is_refused_and_not_recorded(served):
    url, record = served
    with pytest.raises(urllib.error.HTTPError) as err:
        _post(url + "/alerts", b"not json")
    assert err.value.code == 400
    assert not record.exists() or record.read_text() == ""
