"""The probes' rows convert into the evidence tables and pass their Arrow schemas."""

from __future__ import annotations

import json

from gpupoc.evidence import to_arrow
from gpupoc.pipeline import evidence_rows as ev
from gpupoc.pipeline.artifacts import ArtifactRecord
from gpupoc.pipeline.audit import AuditMatch, LedgerEntry
from gpupoc.pipeline.faults import FaultRecord
from gpupoc.pipeline.isolation import AccessAttempt
from gpupoc.pipeline.quotas import OverQuotaResult, QuotaSample

AT = "2026-03-01T12:00:00.000001Z"


def test_access_attempts_and_over_quota_become_access_probes():
    leaked = AccessAttempt(actor="team-a", actor_username="system:serviceaccount:team-a:runner",
                           target_namespace="team-b", action="read_logs", verb="get", resource="pods",
                           subresource="log", name="p", at=AT, http_status=200, allowed=True, message="200: text",
                           sar_allowed=False, finding="could get pods/log", severity="P1", audit_matched=None)
    over = OverQuotaResult(tenant="team-a", namespace="team-a", quota="q", pod="o", at=AT, remaining_gpus=2,
                           requested_gpus=3, http_status=403, outcome="blocked", user_message="exceeded quota")
    rows = ev.access_probes([leaked], [over])
    table = to_arrow("access_probes", rows)
    assert table.num_rows == 2
    a, b = table.to_pylist()
    assert (a["allowed"], a["expected_allowed"], a["access_review_allowed"]) == (True, False, False)
    assert "could get pods/log" in a["message"]
    assert (b["action"], b["allowed"]) == ("over_quota_blocked", False) and "exceeded quota" in b["message"]


def test_quota_samples_split_into_gpu_pods_and_held_rows():
    s = QuotaSample(at=AT, namespace="team-a", quota="q", hard_gpus=8, used_gpus=4, pods_gpus=4, hard_pods=60,
                    used_pods=2)
    rows = to_arrow("quota_samples", ev.quota_samples([s], {"team-a": "vision"})).to_pylist()
    assert [(r["resource"], r["used"], r["tenant"]) for r in rows] == [
        ("requests.nvidia.com/gpu", 4.0, "vision"), ("pods", 2.0, "vision"), ("nvidia.com/gpu held", 4.0, "vision")]
    assert ev.quota_samples([QuotaSample(at=AT, namespace="x", quota="", finding="not verified")]) == []


def test_failure_record_keeps_the_five_parts_of_the_chain():
    rec = FaultRecord(scenario="missing-image", tenant="team-a", namespace="team-a", pod="p", node="n1",
                      trigger="image 'x' does not exist", trigger_method="workload-spec", triggered_at=AT,
                      triggered_by="team-a", phase="Pending", container_state="waiting",
                      container_reason="ErrImagePull", container_message="not found", user_status_message="Pending",
                      user_log_readable_after=False, warning_events=2, warning_reasons="Failed",
                      recovery_action="delete pod by team-a", gpus_released=True, release_s=0.5,
                      release_source="api,dcgm", verified=False, reason="no alert source", findings="x")
    [row] = to_arrow("failure_records", ev.failure_records([rec])).to_pylist()
    assert "ErrImagePull" in row["platform_behaviour"] and "node n1" in row["platform_behaviour"]
    assert "log NOT readable" in row["user_visible"]
    assert row["operator_visible"].startswith("2 Warning event(s) (Failed)")
    assert "GPUs released after 0.5s" in row["recovery"] and row["gpu_release_seconds"] == 0.5
    assert row["verified"] is False and "findings: x" in row["reason"]


def test_ledger_audit_and_artifact_rows_fit_their_tables():
    e = LedgerEntry(seq=1, at=AT, context="admin", username="kubernetes-admin", verb="patch",
                    resource="resourcequotas", namespace="team-a", name="q", status=200, purpose="quota change",
                    task="audit")
    m = AuditMatch(seq=1, task="audit", at=AT, username="kubernetes-admin", verb="patch", resource="resourcequotas",
                   namespace="team-a", name="q", purpose="quota change", matched=False, finding="no audit event")
    a = ArtifactRecord(namespace="team-a", producer_pod="train-1", path="/v/train-1/model.npz", sha256="ab" * 32,
                       consumer="pipeline", verified=True)
    assert to_arrow("ledger", ev.ledger_rows([e])).to_pylist()[0]["http_status"] == 200
    [match] = to_arrow("audit_matches", ev.audit_matches([m])).to_pylist()
    assert match["matched"] is False and match["ledger_action"] == "#1 audit quota change"
    [art] = to_arrow("artifacts", ev.artifacts([a])).to_pylist()
    assert (art["producer"], art["verified"]) == ("train-1", True)
    assert json.loads(json.dumps(ev.detailed([m])))[0]["finding"] == "no audit event"


def test_audit_matches_leave_out_reads_outside_the_audit_policy_by_default():
    read = AuditMatch(seq=2, at=AT, username="u", verb="get", resource="pods", required=False, matched=False)
    write = AuditMatch(seq=3, at=AT, username="u", verb="create", resource="pods", matched=True, audit_id="x")
    assert [r.ledger_action for r in ev.audit_matches([read, write])] == ["#3"]
    assert len(ev.audit_matches([read, write], required_only=False)) == 2


def _rec(**kw):
    base = dict(scenario="nonzero_exit", tenant="team-a", namespace="team-a", pod="p", trigger="exit 3",
                trigger_method="workload-spec", triggered_at=AT, triggered_by="team-a", phase="Failed",
                container_state="terminated", container_reason="Error", exit_code=3, user_log_readable_after=True,
                events='["Normal Started: x"]', airflow_retries=1, gpus_released=True, release_s=6.1,
                release_source="kubernetes-api", verified=True)
    return FaultRecord(**{**base, **kw})


def test_operator_view_and_recovery_are_stated_without_warning_events_or_a_pipeline_action():
    [row] = to_arrow("failure_records", ev.failure_records([_rec(alerts="PodFailed")])).to_pylist()
    assert row["operator_visible"] == "0 Warning event(s); alerts: PodFailed"
    assert row["recovery"].startswith("no pipeline action") and "GPUs released after 6.1s" in row["recovery"]
    assert "Airflow retries 1" in row["recovery"] and row["logs_readable"] is True and row["reason"] is None


def test_operators_who_saw_nothing_leave_the_operator_view_empty():
    [row] = to_arrow("failure_records", ev.failure_records([_rec(findings="operators saw neither")])).to_pylist()
    assert row["operator_visible"] is None and "operators saw neither" in row["reason"]
    [row] = to_arrow("failure_records", ev.failure_records([_rec(warning_events=1, warning_reasons="Failed")])
                     ).to_pylist()
    assert row["operator_visible"] == "1 Warning event(s) (Failed); alerts: none"


def test_a_log_check_that_does_not_apply_is_null_with_its_reason():
    rec = _rec(scenario="missing_image", user_log_readable_after=None, container_state="waiting",
               user_log_note="log not applicable: no container started (ImagePullBackOff)")
    [row] = to_arrow("failure_records", ev.failure_records([rec])).to_pylist()
    assert row["logs_readable"] is None and "no container started" in row["reason"]
    assert "no container started" in row["user_visible"]


def test_inject_faults_rows_are_complete_and_a_raised_scenario_keeps_its_reason():
    from gpupoc.classes.fault_recovery.probes import _failure_rows

    done = _rec(alerts="PodFailed").model_dump(mode="json")
    node = _rec(scenario="node_failure", warning_events=1, warning_reasons="NodeNotReady", alerts="GpuXidError",
                recovery_action="recover node n7 by kubernetes-admin at x").model_dump(mode="json")
    rows = to_arrow("failure_records", _failure_rows([done, node, {"scenario": "hang", "pod": "p", "namespace": "a",
                                                                  "verified": False, "reason": "GpupocError: x"}]
                                                     )).to_pylist()
    for r in rows[:2]:
        assert r["operator_visible"] and r["recovery"] and r["trigger"] and r["platform_behaviour"], r
    assert rows[1]["recovery"].startswith("recover node n7")
    assert rows[2]["verified"] is False and rows[2]["reason"] == "GpupocError: x"
