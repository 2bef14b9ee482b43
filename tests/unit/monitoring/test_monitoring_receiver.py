"""monitoring/receiver: every webhook notification is appended as one JSON line; a forged notification without
the bearer token is refused with 401, counted beside the record and never recorded; the receiver refuses to
listen beyond loopback without the token and TLS."""

from __future__ import annotations

import json
import ssl
import threading
import urllib.error
import urllib.request

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.monitoring import receiver
from gpupoc.monitoring.intake_auth import IntakeAuth, prepare, refused, refused_path


@pytest.fixture
def served(tmp_path):
    record = tmp_path / "alerts.jsonl"
    httpd = receiver.serve("127.0.0.1", 0, record)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", record
    httpd.shutdown()
    httpd.server_close()


def _post(url, body: bytes, token: str | None = None, ca=None):
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    ctx = ssl.create_default_context(cafile=str(ca)) if ca else None
    try:
        with urllib.request.urlopen(req, timeout=5, context=ctx) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        if exc.code >= 500 or exc.code == 400:
            raise
        return exc.code


@pytest.fixture
def guarded(tmp_path):
    """The receiver as ``gpupoc stack up`` runs it: a generated token and a certificate of its own CA."""
    record = tmp_path / "alerts.jsonl"
    auth = prepare(tmp_path / "receiver", "127.0.0.1", "alert receiver")
    httpd = receiver.serve("127.0.0.1", 0, record, auth)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"https://127.0.0.1:{httpd.server_address[1]}", record, auth
    httpd.shutdown()
    httpd.server_close()


NOTE = {"version": "4", "status": "firing", "receiver": "gpupoc-webhook",
        "alerts": [{"status": "firing", "labels": {"alertname": "GpuXidError", "instance": "training-node-1"}}]}


def test_a_forged_alert_without_the_token_is_refused_counted_and_never_recorded(guarded):
    url, record, auth = guarded
    assert _post(url + "/alerts", json.dumps(NOTE).encode(), ca=auth.ca_file) == 401
    assert _post(url + "/alerts", json.dumps(NOTE).encode(), token="guess", ca=auth.ca_file) == 401
    assert not record.exists() or record.read_text() == "", "a refused alert never reaches the record"
    assert _post(url + "/alerts", json.dumps({**NOTE, "status": "resolved"}).encode(), auth.token, auth.ca_file) == 200
    assert [json.loads(x)["status"] for x in record.read_text().splitlines()] == ["resolved"]
    counted = refused(record)
    assert counted is not None and (counted.refused, counted.authenticated) == (2, True)
    assert auth.token not in refused_path(record).read_text() + record.read_text()


def test_reading_the_record_needs_the_token_but_health_does_not(guarded):
    url, _, auth = guarded
    ctx = ssl.create_default_context(cafile=str(auth.ca_file))
    with urllib.request.urlopen(url + "/-/healthy", timeout=5, context=ctx) as resp:
        assert resp.status == 200
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(url + "/notifications", timeout=5, context=ctx)
    assert err.value.code == 401


def test_a_sender_that_does_not_trust_the_receivers_ca_cannot_post(guarded):
    url, record, auth = guarded
    with pytest.raises(urllib.error.URLError):
        _post(url + "/alerts", json.dumps(NOTE).encode(), auth.token, ca=None)
    assert not record.exists() or record.read_text() == ""


@pytest.mark.parametrize("auth", [IntakeAuth(), IntakeAuth(token="t")], ids=["nothing", "token-only"])
def test_it_refuses_to_listen_beyond_loopback_without_token_and_tls(tmp_path, auth):
    with pytest.raises(ConfigError) as err:
        receiver.serve("0.0.0.0", 0, tmp_path / "alerts.jsonl", auth)
    assert err.value.source == "--host" and "TLS" in str(err.value)


def test_its_command_line_refuses_to_listen_openly_without_tls(tmp_path, capsys):
    code = receiver.main(["--host", "0.0.0.0", "--record", str(tmp_path / "alerts.jsonl"), "--no-tls"])
    assert code == 2 and "--host" in capsys.readouterr().err


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
