"""Audit intake through the webhook, as kube-apiserver's ``--audit-webhook-config-file`` delivers it: the
receiver started with ``gpupoc audit webhook up``, the simulated API server posting batched EventLists to it,
the audit class passing on the receiver's record, and the freshness probe for preflight (fresh on the webhook,
stale on a source nothing writes)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from gpupoc.monitoring.audit_source import LinesSource, audit_fresh, plan_audit_source
from gpupoc.pipeline.common import repo_root
from gpupoc.pipeline.k8s import ClientFactory
from gpupoc.plan import load_plan

from .class_runner import run_class
from .conftest import launch, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpupoc.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def webhook(tmp_path_factory):
    """The receiver (with a bearer token) and a simulated cluster posting to it in batches of 50 or per second."""
    data_dir = tmp_path_factory.mktemp("audit")
    token = data_dir / "token"
    token.write_text("webhook-test-token\n")
    up = _cli("audit", "webhook", "up", "--data-dir", str(data_dir), "--token-file", str(token))
    assert up.returncode == 0, up.stdout + up.stderr
    state = json.loads((data_dir / "audit-webhook.json").read_text())
    sim = launch(tmp_path_factory.mktemp("sim"), extra=(
        "--audit-webhook-config-file", state["config"], "--audit-webhook-batch-max-size", "50",
        "--audit-webhook-batch-max-wait", "1s", "--audit-webhook-initial-backoff", "1s"))
    yield sim, state
    sim.stop()
    _cli("audit", "webhook", "down", "--data-dir", str(data_dir))


def webhook_plan(tmp: Path, sim, state) -> Path:
    plan = yaml.safe_load((repo_root() / "plans" / "default.yaml").read_text())
    plan["platform"]["kubeconfig"] = str(sim.kubeconfig)
    plan["evidence_root"] = str(tmp / "evidence")
    sources = {k: v for k, v in plan["evidence_sources"].items() if k != "audit_log_path"}
    plan["evidence_sources"] = sources | {"audit": {"kind": "webhook", "record": state["record"], "url": state["url"],
                                                    "catch_up_seconds": 30}}
    start = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=1)
    plan["window"].update(start=start.isoformat(), end=(start + timedelta(days=7)).isoformat())
    path = tmp / "plan.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


def record_lines(state) -> list[dict]:
    return [json.loads(x) for x in Path(state["record"]).read_text().splitlines() if x.strip()]


def test_the_api_server_posts_its_audit_events_to_the_receiver(webhook):
    sim, state = webhook
    sim.kubectl("-n", "team-nlp", "annotate", "resourcequota", "team-nlp-gpu", "gpupoc.io/probe=1", "--overwrite",
                check=True)
    hit = wait_for("the annotate's audit event in the receiver's record", lambda: [
        e for e in record_lines(state) if e["verb"] == "patch" and e["objectRef"].get("name") == "team-nlp-gpu"])
    assert hit[0]["kind"] == "Event" and hit[0]["user"]["username"] == "kubernetes-admin"
    in_log = {e["auditID"] for e in sim.audit_events()}
    assert {e["auditID"] for e in record_lines(state)} <= in_log, "the webhook gets what the log gets"
    assert "webhook-test-token" not in Path(state["record"]).read_text()


def test_a_forged_event_list_without_the_token_is_refused_and_never_recorded(webhook):
    """What an attacker sharing the network would post with curl: the API server's own words, no token."""
    import ssl
    import urllib.error
    import urllib.request

    from gpupoc.monitoring.intake_auth import refused

    sim, state = webhook
    assert state["url"].startswith("https://"), "the receiver serves TLS by default"
    forged = {"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "items": [{
        "auditID": "forged-0001", "stage": "ResponseComplete", "verb": "create", "level": "Metadata",
        "user": {"username": "system:serviceaccount:team-nlp:runner"},
        "objectRef": {"resource": "pods", "namespace": "team-nlp", "name": "forged-pod"},
        "responseStatus": {"code": 201}}]}
    before = refused(Path(state["record"])).refused
    req = urllib.request.Request(state["url"] + "/", data=json.dumps(forged).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10, context=ssl.create_default_context(cafile=state["ca_file"]))
    assert err.value.code == 401
    assert refused(Path(state["record"])).refused == before + 1
    assert not [e for e in record_lines(state) if e.get("auditID") == "forged-0001"], "never in the evidence"


def test_the_audit_class_passes_with_the_webhook_source(webhook, tmp_path):
    sim, state = webhook
    plan_file = webhook_plan(tmp_path, sim, state)
    run = run_class(plan_file, "audit_trail", "audit__webhook", probes=("quota_change", "artifact_hand_over"))
    assert not run.errors, run.errors
    manifest = json.loads((run.run_dir / "manifest.json").read_text())
    sources = json.dumps(manifest)
    assert "audit webhook record" in sources, "the evidence names the webhook as its source"
    audit = {c: v for c, v in run.verdicts.items() if c.startswith("AUD-")}
    failing = {c: v for c, v in run.verdicts.items() if v == "fail" or (c in audit and v != "pass")}
    assert audit and not failing, f"audit checks not passing: {failing}; all: {run.verdicts}"
    assert manifest["intake"]["audit_webhook"]["authenticated"] is True, manifest.get("intake")
    assert "webhook-test-token" not in sources, "the token never reaches the evidence"


def test_the_freshness_probe_finds_the_webhook_fresh_and_a_dead_source_stale(webhook, tmp_path):
    sim, state = webhook
    plan = load_plan(webhook_plan(tmp_path, sim, state))
    factory = ClientFactory(str(sim.kubeconfig_http))
    try:
        fresh = audit_fresh(plan_audit_source(plan), factory("admin"), "gpupoc-system", max_delay_s=20)
        assert fresh.fresh and fresh.delay_s is not None, fresh
        dead = tmp_path / "nobody-writes.jsonl"
        dead.write_text("")
        stale = audit_fresh(LinesSource(dead, "a record nothing writes", ""), factory("admin"), "gpupoc-system",
                            max_delay_s=2)
        assert not stale.fresh and "did not arrive within" in stale.reason and "live stream" in stale.fix
    finally:
        factory.close()
    probes = [e for e in sim.audit_events() if (e.get("objectRef") or {}).get("name") in (fresh.probe, stale.probe)]
    assert {e["verb"] for e in probes} == {"create"} and all("dryRun=All" in e["requestURI"] for e in probes)
    assert sim.kubectl("-n", "gpupoc-system", "get", "configmap", fresh.probe).returncode != 0, \
        "the probe's dry run leaves nothing behind"
