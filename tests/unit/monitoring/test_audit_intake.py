"""``gpupoc audit webhook up|down|status``: by default the receiver generates its bearer token and its CA, its
kubeconfig-format config for the API server carries both, and the simulated API server's backend delivers
through that config over TLS; a forged post without the token is refused; it refuses to listen beyond
loopback without the token and TLS."""

from __future__ import annotations

import base64
import json
import ssl
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
import yaml

from gpupoc.exceptions import ConfigError
from gpupoc.monitoring import audit_intake as intake
from gpupoc.monitoring.intake_auth import refused
from gpupoc.sim.api.tls import ensure_pki
from gpupoc.sim.audit_webhook import WebhookBackend, load_webhook_config
from tests.waiting import wait_for

pytestmark = pytest.mark.timeout(60)


def delivered(record, name: str, step_seconds: float = 20.0) -> list[dict]:
    """The events recorded once one named ``name`` is among them (a stall of ``step_seconds`` fails)."""
    def events() -> list[dict]:
        return [json.loads(x) for x in record.read_text().splitlines() if x.strip()]

    return wait_for(f"{name} in {record}", events, lambda got: any(e["objectRef"]["name"] == name for e in got),
                    step_seconds=step_seconds, poll=0.05, describe=lambda got: repr([e["objectRef"]["name"] for e in got]))


def event(name: str) -> dict:
    return {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "verb": "create", "objectRef": {"name": name}}


def forged_post(url: str, ca_file: str) -> int:
    """A curl-like post of an EventList without credentials (trusting the CA, so only the token is missing)."""
    body = json.dumps({"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "items": [event("forged")]}).encode()
    req = urllib.request.Request(url + "/audit", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10, context=ssl.create_default_context(cafile=ca_file)) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_up_by_default_generates_the_token_and_ca_and_the_api_server_delivers_through_its_config(tmp_path):
    data_dir = tmp_path / "audit"
    state = intake.up(data_dir)
    try:
        assert intake.up(data_dir)["pid"] == state["pid"], "up is a no-op while it runs"
        assert intake.status(data_dir)["ready"]
        assert state["url"].startswith("https://"), "TLS by default"
        token_file = data_dir / "token"
        token = token_file.read_text().strip()
        assert len(token) >= 32 and oct(token_file.stat().st_mode & 0o777) == "0o600"
        assert state["token_file"] == str(token_file.resolve()) and token not in json.dumps(state)
        cfg = yaml.safe_load(open(state["config"]))
        cluster, user = cfg["clusters"][0]["cluster"], cfg["users"][0]["user"]
        assert cluster["server"] == state["url"] and user == {"token": token}
        assert base64.b64decode(cluster["certificate-authority-data"]) == open(state["ca_file"], "rb").read()
        assert forged_post(state["url"], state["ca_file"]) == 401
        backend = WebhookBackend(load_webhook_config(state["config"], max_size=1, max_wait_s=0.1)).start()
        backend(event("through-the-config"))
        backend.close()
        got = delivered(data_dir / intake.RECORD_NAME, "through-the-config")
        assert [e["objectRef"]["name"] for e in got] == ["through-the-config"], "the forged batch is not recorded"
        assert refused(data_dir / intake.RECORD_NAME).refused == 1
        kept = "".join(p.read_text(errors="replace") for p in data_dir.glob("*.json*")) + \
            (data_dir / "audit-webhook.log").read_text()
        assert token not in kept, "the token stays out of the record, the refusals, the state and the log"
    finally:
        stopped = intake.down(data_dir)
    assert stopped == [f"audit webhook receiver (pid {state['pid']})"]
    assert not intake.status(data_dir)["running"] and intake.down(data_dir) == []


def test_a_given_token_file_and_certificate_go_into_the_config(tmp_path):
    token = tmp_path / "token"
    token.write_text("t0ken\n")
    pki = ensure_pki(tmp_path / "pki")
    data_dir = tmp_path / "audit"
    state = intake.up(data_dir, token_file=token, tls=(pki.cert, pki.key), ca_file=pki.ca_cert)
    try:
        cfg = yaml.safe_load(open(state["config"]))
        assert cfg["users"][0]["user"]["token"] == "t0ken"
        assert base64.b64decode(cfg["clusters"][0]["cluster"]["certificate-authority-data"]) == pki.ca_pem()
        assert not (data_dir / "token").exists(), "no token is generated when one is given"
    finally:
        intake.down(data_dir)


@pytest.mark.parametrize("flags", [{"no_tls": True}, {"no_token": True}, {"no_tls": True, "no_token": True}])
def test_up_refuses_to_listen_beyond_loopback_without_token_and_tls(tmp_path, flags):
    with pytest.raises(ConfigError) as err:
        intake.up(tmp_path / "audit", host="0.0.0.0", **flags)
    assert err.value.source == "--host" and "--no-token/--no-tls" in str(err.value) and "127.0.0.1" in str(err.value)
    assert not (tmp_path / "audit" / intake.STATE_NAME).exists(), "nothing was started"


def test_the_cli_names_the_flag_and_the_fix_when_asked_to_listen_openly(tmp_path):
    out = subprocess.run([sys.executable, "-m", "gpupoc.cli", "audit", "webhook", "up", "--data-dir",
                          str(tmp_path / "a"), "--host", "0.0.0.0", "--no-tls"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode != 0 and "--host" in out.stderr and "Traceback" not in out.stderr


def test_the_certificate_names_the_advertised_host(tmp_path):
    from gpupoc.common.pki import cert_hosts

    state = intake.up(tmp_path / "audit", advertise_url="https://127.0.0.2:9443", tls_sans=("runner.example",))
    try:
        crt = tmp_path / "audit" / "tls" / "audit-webhook.crt"
        assert {"127.0.0.1", "127.0.0.2", "runner.example"} <= cert_hosts(crt)
        assert yaml.safe_load(open(state["config"]))["clusters"][0]["cluster"]["server"] == "https://127.0.0.2:9443"
    finally:
        intake.down(tmp_path / "audit")


def test_status_without_a_receiver_says_how_to_start_one(tmp_path):
    assert "gpupoc audit webhook up" in intake.status(tmp_path / "none")["reason"]
