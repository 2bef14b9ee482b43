"""The probes against the simulated cluster: isolation holds on a correct cluster and breaks under the
cross-tenant-logs fault; an admin quota change is found in the audit log unless audit-gaps hides it; a
missing image leaves a complete failure record; an artifact is handed over and indexed."""

from __future__ import annotations

import json
import time

import pytest

from gpupoc.common.timefmt import parse_time
from gpupoc.classes.audit_trail.artifacts import hand_over
from gpupoc.monitoring.audit import read_audit_log
from gpupoc.classes.audit_trail.quota_change import change_quota, restore_quota
from gpupoc.pipeline.audit import Ledger, LedgerCaller, match_ledger
from gpupoc.pipeline.audit import audit_events as to_events
from gpupoc.classes.fault_recovery.faults import FaultContext, Scenario, run_scenario
from gpupoc.classes.fault_recovery.gpus import api_probe, dcgm_probe, url_fetcher
from gpupoc.classes.tenant_isolation.isolation import P1, attach_audit, probes_for, Targets, run_isolation_probes
from gpupoc.classes.tenant_isolation.quotas import sample_quotas, submit_over_quota
from gpupoc.pipeline.k8s import Actor, ClientFactory, service_account_actor

from tests.waiting import wait_for as progressive_wait

from .conftest import wait_for

pytestmark = pytest.mark.integration

TENANTS = ("team-vision", "team-nlp", "team-serving")
ADMIN = Actor("admin", "kubernetes-admin", ("kubeadm:cluster-admins", "system:authenticated"))
TOLERATE_GPU = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def pod(name: str, ns: str, image: str = "gpupoc/virtual:1", gpus: int = 1, env: dict | None = None,
        args: list[str] | None = None) -> dict:
    c = {"name": "base", "image": image, "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
         "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}
    if args:
        c["args"] = args
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"restartPolicy": "Never", "tolerations": TOLERATE_GPU, "containers": [c]}}


def run_pod(factory: ClientFactory, ns: str, manifest: dict, phase: str = "Running", timeout: float = 120) -> dict:
    c = factory(ns)
    r = c.call("POST", f"/api/v1/namespaces/{ns}/pods", body=manifest)
    assert r.status == 201, r.message
    name = manifest["metadata"]["name"]
    return progressive_wait(f"pod {ns}/{name} to be {phase}", lambda: c.call("GET", f"/api/v1/namespaces/{ns}/pods/{name}").body,
                            lambda p: p["status"].get("phase") in (phase, "Failed"), step_seconds=timeout, poll=0.3,
                            describe=lambda p: repr(p["status"]), progress=lambda p: p["status"].get("phase"))


def audit_events(sim, wait: float = 0.5) -> list[dict]:
    """The platform's audit log through the monitoring reader (an empty log reads as no events)."""
    time.sleep(wait)  # the server writes audit lines as requests complete
    return to_events(read_audit_log(sim.audit_log))


@pytest.fixture(scope="module")
def factory(sim_server):
    f = ClientFactory(str(sim_server.kubeconfig))
    yield f
    f.close()


def actors() -> list[Actor]:
    return [service_account_actor(t, t, "runner") for t in TENANTS]


def test_a_correct_cluster_denies_every_cross_tenant_attempt_and_audits_each_denial(sim_server, factory):
    run_pod(factory, "team-nlp", pod("victim", "team-nlp", env={"WORKLOAD_DURATION_SECONDS": "120"}))
    rows = run_isolation_probes(factory, "admin", actors())
    assert len(rows) == 6 * len(probes_for(Targets("x")))
    allowed = [(r.actor, r.target_namespace, r.action, r.http_status) for r in rows if r.allowed is not False]
    assert allowed == [], f"cross-tenant access on a correct cluster: {allowed}"
    assert all(r.http_status == 403 and r.sar_allowed is False and r.sar_agrees for r in rows)
    log = next(r for r in rows if r.action == "read_logs" and r.target_namespace == "team-nlp")
    assert log.name == "victim" and 'cannot get resource "pods/log"' in log.message
    attach_audit(rows, audit_events(sim_server))
    unmatched = [(r.actor, r.action) for r in rows if not r.audit_matched]
    assert unmatched == [], f"denials without an audit event (decision forbid): {unmatched}"


def test_over_quota_is_blocked_with_the_quota_message_and_usage_is_sampled(sim_server, factory):
    run_pod(factory, "team-nlp", pod("quota-user", "team-nlp", env={"WORKLOAD_DURATION_SECONDS": "120"}))
    hard = {s.row.namespace: s for s in sample_quotas(factory("admin"), TENANTS)}["team-serving"].row.hard
    assert hard > 0
    row = submit_over_quota(factory("team-serving"), "team-serving", "team-serving", "team-serving-gpu",
                            lambda name, gpus: pod(name, "team-serving", gpus=gpus), observe_s=2)
    # one GPU more than the quota's hard limit is asked for, and refused at admission
    assert row.outcome == "blocked" and row.http_status == 403 and row.requested_gpus == hard + 1
    assert "exceeded quota: team-serving-gpu" in row.user_message and row.finding == ""
    samples = {s.row.namespace: s for s in sample_quotas(factory("admin"), TENANTS)}
    assert samples["team-serving"].row.hard == hard and samples["team-serving"].row.used == 0
    assert samples["team-nlp"].pods_gpus >= 1 and not samples["team-nlp"].finding


def test_admin_quota_change_is_found_in_the_audit_log(sim_server, factory, tmp_path):
    ledger = Ledger(tmp_path / "ledger" / "audit.jsonl", task="quota_change")
    admin = LedgerCaller(factory("admin"), ADMIN, ledger)
    before = {s.row.namespace: s for s in sample_quotas(factory("admin"), TENANTS)}["team-vision"].row.hard
    change = change_quota(admin, "team-vision", "team-vision-gpu", before + 4)
    restore_quota(admin, change)
    assert (change.old_gpus, change.new_gpus, change.restored) == (str(before), str(before + 4), True)
    # the quota's status follows its spec when the quota controller resyncs
    wait_for("the restored quota in the quota's status", lambda: {
        s.row.namespace: s for s in sample_quotas(factory("admin"), TENANTS)}["team-vision"].row.hard == before)
    rows = [m for m in match_ledger(ledger.entries, audit_events(sim_server)) if m.row.verb == "patch"]
    assert [m.row.matched for m in rows] == [True, True]
    # the audit event is stamped while the request is served: between its sending and its answer, however
    # long a loaded machine takes
    trip = {e.seq: (parse_time(e.finished_at) - parse_time(e.at)).total_seconds() for e in ledger.entries}
    delays = [(m.row.delay_seconds, trip[m.seq]) for m in rows]
    assert all(0 <= delay <= took + 1e-3 for delay, took in delays), delays
    assert all(m.audit_user == "kubernetes-admin" for m in rows)


def test_missing_image_record_shows_the_pull_error_and_the_gpus_released(sim_server, factory):
    info = json.loads((sim_server.data_dir / "sim.json").read_text())
    admin = factory("admin")
    ctx = FaultContext("team-vision", "team-vision", factory("team-vision"), admin,
                       gpu_probes={"api": api_probe(admin),
                                   "dcgm": dcgm_probe(url_fetcher(info["http_url"] + "/metrics"))},
                       alerts=lambda start, end: [], release_timeout_s=120)  # both return once it happened
    rec = run_scenario(ctx, Scenario.MISSING_IMAGE, pod("fault-missing-image", "team-vision",
                                                        image="registry.invalid/team-vision/trainer:404"),
                       fail_timeout_s=120, airflow_retries=0)
    assert rec.container_reason in ("ErrImagePull", "ImagePullBackOff")
    assert "registry.invalid/team-vision/trainer:404" in rec.container_message and "not found" in rec.container_message
    assert "Failed" in rec.warning_reasons and "ErrImagePull" in rec.user_status_message
    assert rec.gpus_held_at_failure == 1 and rec.gpus_released and rec.release_s is not None
    assert rec.recovery_action.startswith("delete pod") and rec.verified, rec.reason
    assert rec.findings == ""


def test_artifact_hand_over_is_hashed_indexed_and_audited(sim_server, factory, tmp_path):
    ledger = Ledger(tmp_path / "ledger" / "artifact.jsonl", task="artifact")
    tenant = LedgerCaller(factory("team-vision"), service_account_actor("team-vision", "team-vision", "runner"), ledger)
    run_pod(factory, "team-vision", pod("producer", "team-vision", image="gpupoc/workload:1",
                                        args=["--mode", "train", "--duration", "1"]), phase="Succeeded", timeout=60)
    rec = hand_over(tenant, "team-vision", "producer")
    assert rec.row.verified and rec.hash_verified and rec.index_written, rec.reason
    assert rec.row.path.startswith(str(sim_server.data_dir / "volumes" / "team-vision" / "artifacts"))
    patched = [m.row for m in match_ledger(ledger.entries, audit_events(sim_server)) if m.row.verb == "patch"]
    assert [(m.resource, m.name, m.matched) for m in patched] == [("configmaps", "artifact-index", True)]


def test_cross_tenant_logs_fault_lets_the_log_read_through_and_flags_it(start_sim):
    sim = start_sim(faults="cross-tenant-logs")
    f = ClientFactory(str(sim.kubeconfig))
    try:
        run_pod(f, "team-nlp", pod("victim", "team-nlp", env={"WORKLOAD_DURATION_SECONDS": "60"}))
        rows = run_isolation_probes(f, "admin", [service_account_actor("team-vision", "team-vision", "runner")],
                                    target_namespaces=["team-nlp"])
        leaked = [r for r in rows if r.allowed]
        assert [(r.action, r.http_status) for r in leaked] == [("read_logs", 200)]
        assert leaked[0].severity == P1 and "pods/log in team-nlp" in leaked[0].finding
        assert all(r.allowed is False for r in rows if r.action != "read_logs")
    finally:
        f.close()


def test_audit_gaps_fault_leaves_the_quota_change_unmatched(start_sim, tmp_path):
    sim = start_sim(faults="audit-gaps")
    f = ClientFactory(str(sim.kubeconfig))
    try:
        ledger = Ledger(tmp_path / "ledger.jsonl", task="quota_change")
        admin = LedgerCaller(f("admin"), ADMIN, ledger)
        restore_quota(admin, change_quota(admin, "team-nlp", "team-nlp-gpu", 4))
        rows = [m for m in match_ledger(ledger.entries, audit_events(sim)) if m.row.verb == "patch"]
        assert [m.row.matched for m in rows] == [False, False]
        assert all("no audit event for kubernetes-admin patch resourcequotas team-nlp/team-nlp-gpu" in m.finding
                   for m in rows)
    finally:
        f.close()


def test_gpus_leak_fault_shows_in_the_gpu_metrics_after_a_failed_exit(start_sim):
    sim = start_sim(faults="gpus-leak")
    info = json.loads((sim.data_dir / "sim.json").read_text())
    f = ClientFactory(str(sim.kubeconfig))
    try:
        admin = f("admin")
        ctx = FaultContext("team-nlp", "team-nlp", f("team-nlp"), admin,
                           gpu_probes={"api": api_probe(admin),
                                       "dcgm": dcgm_probe(url_fetcher(info["http_url"] + "/metrics"))},
                           alerts=lambda start, end: [], release_timeout_s=3)
        rec = run_scenario(ctx, Scenario.NON_ZERO_EXIT, pod("fault-exit", "team-nlp", gpus=2, env={
            "WORKLOAD_DURATION_SECONDS": "1", "WORKLOAD_EXIT_CODE": "3"}), fail_timeout_s=20, airflow_retries=0)
        assert (rec.phase, rec.container_reason, rec.exit_code) == ("Failed", "Error", 3)
        assert rec.gpus_held_at_failure == 2 and rec.gpus_released is False and rec.severity == P1
        assert "still held per dcgm" in rec.findings
    finally:
        f.close()
