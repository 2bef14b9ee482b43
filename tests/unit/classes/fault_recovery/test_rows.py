"""Fault records become failure_records rows that pass the table's Arrow schema."""

from __future__ import annotations

import json

from gpupoc.classes.fault_recovery import rows as ev
from gpupoc.classes.fault_recovery.faults import FaultRecord
from gpupoc.evidence import to_arrow

AT = "2026-03-01T12:00:00.000001Z"


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


def test_detailed_rows_are_json_able_dicts_that_keep_the_findings():
    rec = _rec(findings="operators saw neither")
    assert json.loads(json.dumps(ev.detailed([rec])))[0]["findings"] == "operators saw neither"
