"""The simulated API server's webhook audit backend against the real receiver: batches of at most max-size,
sent after max-wait at the latest, a failed post retried, the buffer flushed on close, the config read in
kubeconfig format."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from gpupoc.exceptions import ConfigError
from gpupoc.monitoring.audit_intake import write_webhook_config
from gpupoc.monitoring.audit_webhook import serve
from gpupoc.monitoring.intake_auth import IntakeAuth
from gpupoc.sim.audit_webhook import WebhookBackend, WebhookConfig, load_webhook_config
from gpupoc.sim.cli import parse_duration
from tests.waiting import first_truthy

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def receiver(tmp_path):
    record = tmp_path / "audit.jsonl"
    httpd = serve("127.0.0.1", 0, record, IntakeAuth(token="tok"))
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/audit", record
    httpd.shutdown()
    httpd.server_close()


def names(record) -> list[str]:
    return [json.loads(x)["objectRef"]["name"] for x in record.read_text().splitlines() if x.strip()]


def wait_for(what: str, predicate, step_seconds: float = 20.0) -> None:
    """Until ``predicate()`` holds (``tests/waiting.py``: a stall of ``step_seconds`` fails, naming ``what``)."""
    first_truthy(what, predicate, step_seconds=step_seconds, poll=0.02)


def ev(name: str) -> dict:
    return {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "verb": "create", "objectRef": {"name": name}}


def test_a_full_batch_goes_at_once_and_the_rest_after_max_wait(receiver):
    url, record = receiver
    backend = WebhookBackend(WebhookConfig(url, token="tok", max_size=3, max_wait_s=0.5)).start()
    try:
        for n in "abcd":
            backend(ev(n))
        wait_for("the first batch of three", lambda: names(record)[:3] == ["a", "b", "c"])
        wait_for("the fourth event after max-wait", lambda: names(record) == ["a", "b", "c", "d"])
    finally:
        backend.close()
    assert backend.sent == 4 and backend.dropped == 0


def test_a_lone_event_goes_after_max_wait(receiver):
    url, record = receiver
    backend = WebhookBackend(WebhookConfig(url, token="tok", max_size=400, max_wait_s=0.2)).start()
    try:
        backend(ev("alone"))
        wait_for("the lone event after max-wait", lambda: names(record) == ["alone"])
    finally:
        backend.close()


def test_close_flushes_what_is_buffered(receiver):
    url, record = receiver
    backend = WebhookBackend(WebhookConfig(url, token="tok", max_size=100, max_wait_s=3600)).start()
    backend(ev("late"))
    backend.close()
    assert names(record) == ["late"]


def test_a_refused_post_is_retried_and_a_full_buffer_drops_new_events(tmp_path):
    answers = [500, 200]
    got: list[dict] = []

    class Flaky(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            code = answers.pop(0) if answers else 200
            if code == 200:
                got.extend(body["items"])
            self.send_response(code)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    backend = WebhookBackend(WebhookConfig(url, max_size=1, max_wait_s=0.1, buffer_size=2, initial_backoff_s=0.05))
    try:
        for n in ("x", "y", "z"):  # the thread is not started: the third finds the buffer full
            backend(ev(n))
        assert backend.dropped == 1
        backend.start()
        wait_for("both buffered events after one retry", lambda: [e["objectRef"]["name"] for e in got] == ["x", "y"])
    finally:
        backend.close()
        httpd.shutdown()
        httpd.server_close()
    assert answers == [], "the 500 was answered, then the retry succeeded"


def test_the_config_is_read_like_kubeconfig_and_names_a_missing_server(tmp_path):
    path = write_webhook_config(tmp_path / "hook.yaml", "http://127.0.0.1:9/audit", token="abc")
    cfg = load_webhook_config(path, max_size=7)
    assert (cfg.server, cfg.token, cfg.max_size) == ("http://127.0.0.1:9/audit", "abc", 7)
    assert oct(path.stat().st_mode & 0o777) == "0o600", "the config holds a token"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"clusters": [{"name": "x", "cluster": {}}]}))
    with pytest.raises(ConfigError, match="clusters\\[\\].cluster.server: missing"):
        load_webhook_config(bad)


@pytest.mark.parametrize("text,seconds", [("30s", 30), ("500ms", 0.5), ("2m", 120), ("1.5", 1.5), ("x", None)])
def test_durations_are_read_like_kube_apiservers_flags(text, seconds):
    assert parse_duration(text) == seconds
