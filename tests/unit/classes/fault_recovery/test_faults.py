"""Fault scenarios: failure detection, the evidence record, GPU release timing and node-failure injection."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest

from gpupoc.common.timefmt import utcnow
from gpupoc.classes.fault_recovery.faults import (
    CommandInjector, FaultContext, Injection, Scenario, SimNodeInjector, build_record, container_state, failure_seen,
    kubectl_drain_injector, run_scenario, wait_released,
)
from gpupoc.classes.fault_recovery.gpus import api_probe, dcgm_probe, holders
from gpupoc.pipeline.k8s import Response


def pod(phase="Running", node="n1", gpus=2, state=None, last=None, restarts=0, name="p"):
    cs = {"name": "base", "image": "img", "imageID": "", "ready": False, "restartCount": restarts,
          "state": state or {"running": {"startedAt": "2026-03-01T12:00:00Z"}}}
    if last:
        cs["lastState"] = {"terminated": last}
    return {"metadata": {"name": name, "namespace": "team-a"},
            "spec": {"nodeName": node, "containers": [{"name": "base", "image": "img", "resources": {
                "limits": {"nvidia.com/gpu": str(gpus)}}}]},
            "status": {"phase": phase, "containerStatuses": [cs]}}


OOM = {"terminated": {"reason": "OOMKilled", "exitCode": 137, "finishedAt": "2026-03-01T12:00:05Z"}}
PULL = {"waiting": {"reason": "ErrImagePull", "message": 'rpc error: code = NotFound desc = failed to pull and '
                                                          'unpack image "nope:1"'}}


def test_container_state_reports_the_last_failure_of_a_restarted_container():
    p = pod(state={"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s"}},
            last={"reason": "Error", "exitCode": 3}, restarts=2)
    assert container_state(p) == ("waiting", "Error", "back-off 10s", 3, 2)
    assert container_state(None)[0] == "gone"


@pytest.mark.parametrize("scenario,p,seen", [
    (Scenario.MISSING_IMAGE, pod("Pending", state=PULL), True),
    (Scenario.MISSING_IMAGE, pod("Pending", state={"waiting": {"reason": "ContainerCreating"}}), False),
    (Scenario.OOM_KILL, pod("Failed", state=OOM), True),
    (Scenario.OOM_KILL, pod("Running", state={"running": {}}, last=OOM["terminated"], restarts=1), True),
    (Scenario.NON_ZERO_EXIT, pod("Failed", state={"terminated": {"reason": "Error", "exitCode": 3}}), True),
    (Scenario.NON_ZERO_EXIT, pod("Running"), False),
    (Scenario.NODE_FAILURE, pod("Running"), False),
    (Scenario.NODE_FAILURE, pod("Failed"), True),
    (Scenario.NODE_FAILURE, None, True),
])
def test_failure_seen_per_scenario(scenario, p, seen):
    assert failure_seen(scenario, p) is seen


DCGM = """# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1",Hostname="n1",container="base",namespace="team-a",pod="p"} 80
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-2",Hostname="n1",exported_container="base",exported_namespace="team-a",exported_pod="p",namespace="gpu-operator",pod="dcgm-exporter-x"} 0
DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-3",Hostname="n1"} 0
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-1",Hostname="n1",namespace="team-a",pod="p"} 100
"""


def test_dcgm_holders_accept_both_label_spellings():
    assert holders(DCGM) == {("team-a", "p"): {"GPU-1", "GPU-2"}}
    assert dcgm_probe(lambda: DCGM)("team-a", "p") == 2
    assert dcgm_probe(lambda: DCGM)("team-a", "other") == 0

    def broken():
        raise OSError("connection refused")
    assert dcgm_probe(broken)("team-a", "p") is None


def test_api_probe_counts_gpus_only_while_bound_and_live(fake_caller, k8s_status):
    admin = fake_caller("admin")
    admin.on("GET", r".*/pods/run", Response(200, pod("Running", gpus=4)))
    admin.on("GET", r".*/pods/failed", Response(200, pod("Failed", gpus=4)))
    probe = api_probe(admin)
    assert (probe("team-a", "run"), probe("team-a", "failed"), probe("team-a", "gone")) == (4, 0, 0)
    admin.on("GET", r".*/pods/err", k8s_status(500, "etcd timeout"))
    assert probe("team-a", "err") is None


def _ctx(fake_caller, probes, **kw):
    return FaultContext("team-a", "team-a", fake_caller("team-a"), fake_caller("admin"), gpu_probes=probes,
                        poll_s=0.01, release_timeout_s=0.3, **kw)


def test_wait_released_times_each_probe_and_reports_a_leak(fake_caller):
    seq = iter([2, 2, 0])
    ctx = _ctx(fake_caller, {"api": lambda ns, p: next(seq, 0), "dcgm": lambda ns, p: 2,
                             "down": lambda ns, p: None})
    res = wait_released(ctx, "p", utcnow())
    assert res["api"][0] == 2 and res["api"][1] is not None
    assert res["dcgm"] == (2, None)
    assert res["down"] == (None, None)


def _failed_cluster(fake_caller, probes, log_text="epoch=1 loss=nan\nTrainingDiverged", alerts=None):
    ctx = _ctx(fake_caller, probes, alerts=alerts)
    failed = pod("Failed", state={"terminated": {"reason": "Error", "exitCode": 3, "message": "diverged"}})
    for c in (ctx.tenant, ctx.admin):
        c.on("GET", r".*/pods/p", Response(200, failed))
        c.on("GET", r".*/pods/p/log", Response(200, None, log_text))
    ctx.admin.on("GET", r".*/events", Response(200, {"items": [
        {"involvedObject": {"name": "p"}, "type": "Normal", "reason": "Started", "message": "Started container base",
         "lastTimestamp": "2026-03-01T12:00:00Z"},
        {"involvedObject": {"name": "p"}, "type": "Warning", "reason": "BackOff", "message": "Back-off", "count": 3,
         "lastTimestamp": "2026-03-01T12:00:04Z"},
        {"involvedObject": {"name": "other"}, "type": "Warning", "reason": "Failed", "message": "x"}]}))
    return ctx


def test_build_record_holds_the_whole_evidence_chain(fake_caller):
    ctx = _failed_cluster(fake_caller, {"api": lambda ns, p: 0}, alerts=lambda a, b: ["KubePodFailed"])
    inj = Injection(method="workload-spec", action="exit 3", target="team-a/p", at="2026-03-01T12:00:00Z", by="me")
    rec = build_record(ctx, Scenario.NON_ZERO_EXIT, "p", trigger="exit 3", injections=[inj], failure_at=utcnow(),
                       pod=ctx.admin.call("GET", "/api/v1/namespaces/team-a/pods/p").body, airflow_retries=1)
    assert (rec.phase, rec.container_reason, rec.exit_code, rec.node, rec.gpus_requested) == ("Failed", "Error", 3,
                                                                                              "n1", 2)
    assert "exit code 3" in rec.user_status_message and rec.user_log_readable_after
    assert "TrainingDiverged" in rec.user_log_tail
    assert (rec.warning_events, rec.warning_reasons, rec.alerts) == (1, "BackOff", "KubePodFailed")
    assert json.loads(rec.events) == ["Normal Started: Started container base", "Warning BackOff: Back-off (x3)"]
    assert rec.gpus_released and rec.release_s is not None
    assert rec.verified and rec.reason == "" and rec.findings == ""


def test_build_record_flags_lost_logs_leaked_gpus_and_missing_sources(fake_caller):
    ctx = _failed_cluster(fake_caller, {"dcgm": lambda ns, p: 2}, log_text="")
    rec = build_record(ctx, Scenario.NON_ZERO_EXIT, "p", trigger="exit 3", injections=[], failure_at=utcnow(),
                       pod=pod("Failed"))
    assert rec.user_log_readable_after is False and "log is not readable" in rec.findings
    assert rec.gpus_released is False and rec.severity == "P1" and "still held per dcgm" in rec.findings
    assert not rec.verified and "no alert source" in rec.reason and "Airflow retries" in rec.reason


class ScriptedPodCluster:
    """A pod store where the tenant submits and deletes, and the admin sees ``phases`` advance per read."""

    def __init__(self, fake_caller, states):
        self.states = list(states)
        self.deleted = False
        self.tenant, self.admin = fake_caller("team-a"), fake_caller("admin")
        for c in (self.tenant, self.admin):
            c.on("GET", r".*/pods/p", self.get)
            c.on("GET", r".*/pods/p/log", lambda *a: Response(200, None, "pulling\n") if not self.deleted
                 else Response(404, {"kind": "Status", "message": "not found"}))
            c.on("DELETE", r".*/pods/p", self.delete)
            c.on("GET", r".*/events", Response(200, {"items": [
                {"involvedObject": {"name": "p"}, "type": "Warning", "reason": "Failed",
                 "message": 'Failed to pull image "nope:1": not found'}]}))
        self.tenant.on("POST", r".*/pods", Response(201, {"metadata": {"name": "p"}}))

    def get(self, *a):
        if self.deleted:
            return Response(404, {"kind": "Status", "message": 'pods "p" not found'})
        return Response(200, self.states.pop(0) if len(self.states) > 1 else self.states[0])

    def delete(self, *a):
        self.deleted = True
        return Response(200, {})


def test_missing_image_scenario_records_the_pull_error_then_the_release_after_fail_fast(fake_caller):
    cl = ScriptedPodCluster(fake_caller, [pod("Pending", state={"waiting": {"reason": "ContainerCreating"}}),
                                          pod("Pending", state=PULL)])
    ctx = FaultContext("team-a", "team-a", cl.tenant, cl.admin, gpu_probes={"api": api_probe(cl.admin)},
                       poll_s=0.01, release_timeout_s=1)
    manifest = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "base", "image": "nope:1"}]}}
    rec = run_scenario(ctx, Scenario.MISSING_IMAGE, manifest, fail_timeout_s=2, airflow_retries=0)
    assert rec.container_reason == "ErrImagePull" and "NotFound" in rec.container_message
    assert rec.trigger == "pod image 'nope:1' does not exist" and rec.warning_reasons == "Failed"
    assert rec.recovery_action.startswith("delete pod by team-a") and cl.deleted
    assert rec.gpus_held_at_failure == 2 and rec.gpus_released and rec.release_s < 1
    assert json.loads(rec.injections)[-1]["method"] == "pipeline-delete"


def test_missing_image_never_observed_is_not_verified(fake_caller):
    cl = ScriptedPodCluster(fake_caller, [pod("Pending", state={"waiting": {"reason": "ContainerCreating"}})])
    ctx = FaultContext("team-a", "team-a", cl.tenant, cl.admin, gpu_probes={}, poll_s=0.01)
    rec = run_scenario(ctx, Scenario.MISSING_IMAGE, {"metadata": {"name": "p"}, "spec": {"containers": [{}]}},
                       fail_timeout_s=0.1)
    assert not rec.verified and "not observed within" in rec.reason


class FakeInjector:
    def __init__(self, cluster):
        self.cluster, self.actions = cluster, []

    def fail(self, node):
        self.actions.append(("fail", node))
        self.cluster.states = [pod("Failed", node=node, state={"terminated": {"reason": "Error", "exitCode": 137}})]
        return Injection(method="test", action="fail", target=node, at="2026-03-01T12:00:00Z", by="tester")

    def recover(self, node):
        self.actions.append(("recover", node))
        return Injection(method="test", action="recover", target=node, at="2026-03-01T12:00:09Z", by="tester")


def test_node_failure_injects_mid_run_records_the_injection_and_recovers_the_node(fake_caller):
    cl = ScriptedPodCluster(fake_caller, [pod("Pending", node=""), pod("Running", node="n7")])
    inj = FakeInjector(cl)
    ctx = FaultContext("team-a", "team-a", cl.tenant, cl.admin, gpu_probes={"api": api_probe(cl.admin)},
                       injector=inj, poll_s=0.01, release_timeout_s=1)
    rec = run_scenario(ctx, Scenario.NODE_FAILURE, {"metadata": {"name": "p"}, "spec": {"containers": [{}]}},
                       fail_timeout_s=2, run_before_fail_s=0.01)
    assert inj.actions == [("fail", "n7"), ("recover", "n7")]
    assert (rec.trigger_method, rec.triggered_by, rec.phase, rec.node) == ("test", "tester", "Failed", "n7")
    assert rec.user_log_readable_during is True
    assert rec.gpus_held_at_failure == 2 and rec.gpus_released  # sampled before the node was failed


def test_sim_injector_posts_to_the_admin_endpoint(fake_caller):
    admin = fake_caller("admin").on("POST", r"/apis/sim.gpupoc.io/v1/nodes/n1/(fail|recover)", Response(200, {}))
    i = SimNodeInjector(admin).fail("n1")
    assert i.ok and i.command == "POST /apis/sim.gpupoc.io/v1/nodes/n1/fail" and i.method == "sim-endpoint"
    assert not SimNodeInjector(fake_caller("admin")).recover("n2").ok


def test_command_injector_records_command_and_exit():
    ok = CommandInjector("echo failing {node}", "exit 4", by="ops").fail("gpu-node-1")
    assert ok.ok and "failing gpu-node-1" in ok.detail and ok.by == "ops"
    bad = CommandInjector("true", "exit 4").recover("n")
    assert not bad.ok and bad.detail.startswith("exit 4")


def test_kubectl_drain_injector_cordons_and_drains():
    i = kubectl_drain_injector("/tmp/kc", "admin")
    assert "cordon {node}" in i.fail_command and "drain {node} --ignore-daemonsets" in i.fail_command
    assert i.recover_command.endswith("uncordon {node}") and i.method == "kubectl-drain"


def test_a_silent_exit_is_a_finding_only_when_alerts_are_watched_and_none_fired(fake_caller):
    def record(alerts):
        ctx = _failed_cluster(fake_caller, {"api": lambda ns, p: 0}, alerts=alerts)
        ctx.admin.on("GET", r".*/events", Response(200, {"items": []}))
        return build_record(ctx, Scenario.NON_ZERO_EXIT, "p", trigger="exit 3", injections=[], failure_at=utcnow(),
                            pod=pod("Failed"), airflow_retries=0)
    assert record(lambda a, b: ["KubePodFailed"]).findings == ""
    assert "neither a Warning event nor an alert" in record(lambda a, b: []).findings
    unwatched = record(None)
    assert unwatched.findings == "" and not unwatched.verified and "no alert source" in unwatched.reason


def test_a_pull_error_without_warning_events_is_a_finding(fake_caller):
    ctx = _failed_cluster(fake_caller, {"api": lambda ns, p: 0}, alerts=lambda a, b: [])
    ctx.admin.on("GET", r".*/events", Response(200, {"items": []}))
    rec = build_record(ctx, Scenario.MISSING_IMAGE, "p", trigger="bad image", injections=[], failure_at=utcnow(),
                       pod=pod("Pending", state=PULL), airflow_retries=0)
    assert "no Warning event recorded the failure" in rec.findings and rec.failure_event_missing
    from gpupoc.classes.fault_recovery.rows import failure_records

    row = failure_records([rec])[0]
    assert row.events is None, "the failure is missing from the platform's events: FR-08 must not pass"


def test_prometheus_probe_counts_gpus_under_either_label_spelling():
    from gpupoc.exceptions import SourceUnavailable
    from gpupoc.monitoring.promclient import PrometheusClient
    from gpupoc.classes.fault_recovery.gpus import prometheus_probe

    class Prom(PrometheusClient):
        def __init__(self, answer):
            super().__init__("http://prometheus.invalid:9090")
            self.answer, self.exprs = answer, []

        def query(self, expr, time=None):
            self.exprs.append(expr)
            if isinstance(self.answer, Exception):
                raise self.answer
            return self.answer

    held = Prom([{"metric": {}, "value": [0, "2"]}])
    assert prometheus_probe(held)("team-a", "p") == 2
    assert 'exported_pod="p"' in held.exprs[0] and 'pod="p"' in held.exprs[0]
    assert prometheus_probe(Prom([]))("team-a", "p") == 0
    assert prometheus_probe(Prom(SourceUnavailable("prom", "down")))("team-a", "p") is None


def test_a_refused_submission_raises_api_error_with_status_and_body(fake_caller, k8s_status):
    from gpupoc.exceptions import ApiError

    ctx = _ctx(fake_caller, {})
    ctx.tenant.on("POST", r".*/pods", k8s_status(403, 'pods "p" is forbidden: exceeded quota: team-a-gpu'))
    with pytest.raises(ApiError) as e:
        run_scenario(ctx, Scenario.OOM_KILL, {"metadata": {"name": "p"}, "spec": {"containers": [{}]}})
    assert e.value.status == 403 and "exceeded quota" in str(e.value) and "oom" in str(e.value)


def test_node_failure_targets_the_named_node_keeps_the_plan_name_and_waits_to_recover(fake_caller):
    cl = ScriptedPodCluster(fake_caller, [pod("Running", node="n7")])
    inj = FakeInjector(cl)
    ctx = FaultContext("team-a", "team-a", cl.tenant, cl.admin, gpu_probes={}, injector=inj, poll_s=0.01)
    t0 = time.monotonic()
    rec = run_scenario(ctx, Scenario.NODE_FAILURE, {"metadata": {"name": "p"}, "spec": {"containers": [{}]}},
                       fail_timeout_s=2, run_before_fail_s=0.01, node="n9", recover_after_s=0.3, name="rack-loss")
    assert inj.actions == [("fail", "n9"), ("recover", "n9")] and time.monotonic() - t0 >= 0.3
    assert rec.scenario == "rack-loss"
    cl2 = ScriptedPodCluster(fake_caller, [pod("Running", node="n7")])
    inj2 = FakeInjector(cl2)
    ctx2 = FaultContext("team-a", "team-a", cl2.tenant, cl2.admin, gpu_probes={}, injector=inj2, poll_s=0.01)
    run_scenario(ctx2, Scenario.NODE_FAILURE, {"metadata": {"name": "p"}, "spec": {"containers": [{}]}},
                 fail_timeout_s=2, run_before_fail_s=0.01, recover_after_s=None)
    assert inj2.actions == [("fail", "n7")]


def test_only_alerts_about_the_pod_its_namespace_or_its_node_count(fake_caller):
    seen = [{"alertname": "GpuPodFailed", "namespace": "team-a", "pod": "p", "node": ""},
            {"alertname": "TenantQuotaFull", "namespace": "team-a", "pod": "", "node": ""},
            {"alertname": "NodeDown", "namespace": "", "pod": "", "node": "n1"},
            {"alertname": "OtherPod", "namespace": "team-a", "pod": "q", "node": ""},
            {"alertname": "OtherTeam", "namespace": "team-b", "pod": "p", "node": "n5"}]
    ctx = _failed_cluster(fake_caller, {"api": lambda ns, p: 0}, alerts=lambda a, b: seen)
    rec = build_record(ctx, Scenario.NON_ZERO_EXIT, "p", trigger="x", injections=[], failure_at=utcnow(),
                       pod=pod("Failed", node="n1"), airflow_retries=0)
    assert rec.alerts == "GpuPodFailed,NodeDown,TenantQuotaFull"


def test_alert_wait_polls_until_the_rule_fires(fake_caller):
    answers = iter([[], [], ["GpuPodFailed"]])
    ctx = _failed_cluster(fake_caller, {"api": lambda ns, p: 0}, alerts=lambda a, b: next(answers, ["GpuPodFailed"]))
    ctx.alert_wait_s = 2
    rec = build_record(ctx, Scenario.NON_ZERO_EXIT, "p", trigger="x", injections=[], failure_at=utcnow(),
                       pod=pod("Failed"), airflow_retries=0)
    assert rec.alerts == "GpuPodFailed"


def test_receiver_alert_source_reads_the_monitoring_record(tmp_path):
    from gpupoc.classes.fault_recovery.faults import receiver_alerts

    record = tmp_path / "alerts.jsonl"
    now = utcnow()
    note = {"receivedAt": now.isoformat(), "receiver": "gpupoc", "status": "firing", "alerts": [
        {"status": "firing", "labels": {"alertname": "GpuPodFailed", "namespace": "team-a", "pod": "p"},
         "annotations": {}, "startsAt": now.isoformat(), "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "f"}]}
    record.write_text(json.dumps(note) + "\n")
    rows = receiver_alerts(str(record))(now - timedelta(seconds=5), now + timedelta(seconds=5))
    assert [(r["alertname"], r["pod"]) for r in rows] == [("GpuPodFailed", "p")]
    assert receiver_alerts(str(tmp_path / "absent"))(now, now) == []


def test_lost_logs_alone_make_the_record_a_p1(fake_caller):
    ctx = _failed_cluster(fake_caller, {"api": lambda ns, p: 0}, log_text="", alerts=lambda a, b: ["KubePodFailed"])
    rec = build_record(ctx, Scenario.OOM_KILL, "p", trigger="oom", injections=[], failure_at=utcnow(),
                       pod=pod("Failed", state=OOM), airflow_retries=0)
    assert rec.findings.startswith("the log is not readable") and rec.severity == "P1" and rec.verified


def test_an_image_that_never_pulled_has_no_log_to_read_so_the_check_does_not_apply(fake_caller):
    from gpupoc.classes.fault_recovery.fault_record import never_started

    ctx = _failed_cluster(fake_caller, {"api": lambda ns, p: 0}, log_text="", alerts=lambda a, b: [])
    pulling = pod("Pending", state=PULL)
    for c in (ctx.tenant, ctx.admin):
        c.on("GET", r".*/pods/p", Response(200, pulling))
        c.on("GET", r".*/pods/p/log", Response(400, {"message": 'container "base" is waiting to start'}))
    rec = build_record(ctx, Scenario.MISSING_IMAGE, "p", trigger="bad image", injections=[], failure_at=utcnow(),
                       pod=pulling, airflow_retries=0)
    assert rec.user_log_readable_after is None and "no container started (ErrImagePull)" in rec.user_log_note
    assert "log is not readable" not in rec.findings
    assert never_started(pulling) and not never_started(pod("Failed", state=OOM))
    assert not never_started(pod(state={"waiting": {"reason": "CrashLoopBackOff"}}, last={"reason": "Error"},
                                 restarts=1))


def test_a_container_that_ran_and_lost_its_log_still_fails_the_log_check(fake_caller):
    ctx = _failed_cluster(fake_caller, {"api": lambda ns, p: 0}, log_text="", alerts=lambda a, b: ["PodFailed"])
    oom = pod("Failed", state=OOM)
    for c in (ctx.tenant, ctx.admin):
        c.on("GET", r".*/pods/p", Response(200, oom))
    rec = build_record(ctx, Scenario.OOM_KILL, "p", trigger="oom", injections=[], failure_at=utcnow(), pod=oom,
                       airflow_retries=0)
    assert rec.user_log_readable_after is False and rec.user_log_note == ""
    assert "log is not readable" in rec.findings and rec.severity == "P1"


def test_node_failure_record_names_the_node_recovery(fake_caller):
    cl = ScriptedPodCluster(fake_caller, [pod("Pending", node=""), pod("Running", node="n7")])
    ctx = FaultContext("team-a", "team-a", cl.tenant, cl.admin, gpu_probes={"api": api_probe(cl.admin)},
                       injector=FakeInjector(cl), poll_s=0.01, release_timeout_s=1)
    rec = run_scenario(ctx, Scenario.NODE_FAILURE, {"metadata": {"name": "p"}, "spec": {"containers": [{}]}},
                       fail_timeout_s=2, run_before_fail_s=0.01)
    assert rec.recovery_action == "recover node n7 by tester at 2026-03-01T12:00:09Z"
    assert [i["action"] for i in json.loads(rec.injections)] == ["fail", "recover"]


def test_the_stuck_image_pull_stays_until_operators_are_alerted_so_the_alert_is_part_of_the_record(fake_caller):
    cl = ScriptedPodCluster(fake_caller, [pod("Pending", state=PULL)])
    asked = []

    def alerts(start, end):  # the rule fires after its `for`: the third question sees it
        asked.append(cl.deleted)
        return [{"alertname": "ImagePullBackOff", "namespace": "team-a", "pod": "p"}] if len(asked) >= 3 else []

    ctx = FaultContext("team-a", "team-a", cl.tenant, cl.admin, gpu_probes={"api": api_probe(cl.admin)},
                       poll_s=0.01, release_timeout_s=1, alerts=alerts, alert_wait_s=5)
    manifest = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "base", "image": "nope:1"}]}}
    rec = run_scenario(ctx, Scenario.MISSING_IMAGE, manifest, fail_timeout_s=2, airflow_retries=0)
    assert asked[:3] == [False, False, False], "the pod was not deleted before the alert fired"
    assert rec.alerts == "ImagePullBackOff" and cl.deleted
