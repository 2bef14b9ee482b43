"""``gpupoc audit webhook up|down|status``: the receiver runs in the background, its kubeconfig-format config
for the API server names it (with the token and, over HTTPS, the CA), and the simulated API server's backend
delivers through that config, over TLS too."""

from __future__ import annotations

import json
import time

import pytest
import yaml

from gpupoc.monitoring import audit_intake as intake
from gpupoc.sim.api.tls import ensure_pki
from gpupoc.sim.audit_webhook import WebhookBackend, load_webhook_config

pytestmark = pytest.mark.timeout(60)


def delivered(record, name: str, timeout: float = 20.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = [json.loads(x) for x in record.read_text().splitlines() if x.strip()]
        if any(e["objectRef"]["name"] == name for e in got):
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {name} in {record}")


def event(name: str) -> dict:
    return {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "verb": "create", "objectRef": {"name": name}}


@pytest.mark.parametrize("https", [False, True])
def test_up_writes_a_config_the_api_server_backend_delivers_through_and_down_stops_it(tmp_path, https):
    token = tmp_path / "token"
    token.write_text("t0ken\n")
    tls = None
    if https:
        pki = ensure_pki(tmp_path / "pki")
        tls = (pki.cert, pki.key)
    data_dir = tmp_path / "audit"
    state = intake.up(data_dir, token_file=token, tls=tls, ca_file=pki.ca_cert if https else None)
    try:
        assert intake.up(data_dir)["pid"] == state["pid"], "up is a no-op while it runs"
        assert intake.status(data_dir)["ready"]
        cfg = yaml.safe_load(open(state["config"]))
        cluster = cfg["clusters"][0]["cluster"]
        assert cluster["server"] == state["url"] and state["url"].startswith("https://" if https else "http://")
        assert ("certificate-authority-data" in cluster) is https and cfg["users"][0]["user"]["token"] == "t0ken"
        backend = WebhookBackend(load_webhook_config(state["config"], max_size=1, max_wait_s=0.1)).start()
        backend(event("through-the-config"))
        backend.close()
        delivered(data_dir / intake.RECORD_NAME, "through-the-config")
    finally:
        stopped = intake.down(data_dir)
    assert stopped == [f"audit webhook receiver (pid {state['pid']})"]
    assert not intake.status(data_dir)["running"] and intake.down(data_dir) == []


def test_status_without_a_receiver_says_how_to_start_one(tmp_path):
    assert "gpupoc audit webhook up" in intake.status(tmp_path / "none")["reason"]
