from __future__ import annotations

import json

import pytest

from gpupoc.common import api_budget as B

TEXT = """# HELP apiserver_request_total Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",resource="pods",verb="LIST"} 10
apiserver_request_total{code="429",resource="pods",verb="LIST"} 2
apiserver_request_total{code="200",resource="events",verb="WATCH"} 3
apiserver_response_sizes_sum{resource="pods",verb="LIST"} 4.5e+06
apiserver_flowcontrol_request_execution_seconds_sum{flow_schema="gpupoc-observer",priority_level="workload-low",type="regular"} 2
apiserver_flowcontrol_request_execution_seconds_sum{flow_schema="gpupoc-observer",priority_level="workload-low",type="watch"} 1
apiserver_flowcontrol_work_estimated_seats_sum{flow_schema="gpupoc-observer",priority_level="workload-low"} 40
apiserver_flowcontrol_work_estimated_seats_count{flow_schema="gpupoc-observer",priority_level="workload-low"} 10
apiserver_flowcontrol_request_execution_seconds_sum{flow_schema="exempt",priority_level="exempt",type="regular"} 9
etcd_request_duration_seconds_sum{operation="get"} 1
weird_label{msg="a \\"quoted\\" value, with comma"} 1
"""


def test_parse_reads_the_budget_families_and_skips_the_rest():
    m = B.parse_metrics(TEXT)
    assert m[("apiserver_request_total", frozenset({("code", "429"), ("resource", "pods"), ("verb", "LIST")}))] == 2
    assert m[("apiserver_response_sizes_sum", frozenset({("resource", "pods"), ("verb", "LIST")}))] == 4.5e6
    assert not any(name.startswith("etcd_") for name, _ in m)


def test_parse_refuses_a_broken_line_naming_it():
    with pytest.raises(B.MetricsError, match="line 2: value 'abc' is not a number"):
        B.parse_metrics('apiserver_request_total{code="200"} 1\napiserver_request_total{code="500"} abc\n')


def test_delta_sums_and_seat_seconds_by_flow_schema():
    before = B.parse_metrics(TEXT)
    after = B.parse_metrics(TEXT.replace('verb="LIST"} 10', 'verb="LIST"} 25'))
    d = B.delta(before, after)
    assert B.by(d, "apiserver_request_total", "code") == {("200",): 15}
    seats = B.seat_seconds(before)
    assert seats["gpupoc-observer"] == pytest.approx(3 * 4.0), "execution seconds x mean seats per request"
    assert seats["exempt"] == pytest.approx(9.0), "no seat estimate: one seat per request"


def test_component_comes_from_the_user_agent():
    assert B.component_of("gpupoc-observer/0.1.0") == "observer"
    assert B.component_of("kube-scheduler/v1.37.2 (linux/amd64)") == "other"
    assert B.component_of("") == "other"


def _event(agent: str, verb: str, resource: str, at: str, code: int = 200, stage: str = "ResponseComplete") -> str:
    return json.dumps({"stage": stage, "userAgent": agent, "verb": verb, "objectRef": {"resource": resource},
                       "requestReceivedTimestamp": at, "responseStatus": {"code": code}})


def test_audit_counts_completed_requests_per_component_inside_the_window(tmp_path):
    log = tmp_path / "audit.log"
    log.write_text("\n".join([
        _event("gpupoc-observer/0.1.0", "list", "pods", "2026-01-01T00:00:01Z"),
        _event("gpupoc-observer/0.1.0", "watch", "pods", "2026-01-01T00:00:02Z"),
        _event("gpupoc-observer/0.1.0", "watch", "pods", "2026-01-01T00:00:02Z", stage="ResponseStarted"),
        _event("gpupoc-observer/0.1.0", "list", "pods", "2026-01-01T00:00:03Z", code=429),
        _event("gpupoc-observer/0.1.0", "list", "pods", "2026-01-01T00:09:00Z"),  # after the window
        _event("gpupoc-submitter/0.1.0", "create", "pods", "2026-01-01T00:00:02Z"),
        "{not json",
    ]) + "\n")
    a = B.audit_requests(log, "2026-01-01T00:00:00Z", "2026-01-01T00:05:00Z")
    assert a.of("observer") == 3 and a.of("observer", "list") == 2 and a.of("submitter") == 1
    assert a.codes[("observer", 429)] == 1 and a.unreadable == 1


def test_audit_reads_the_rotated_files_too(tmp_path):
    (tmp_path / "audit-2026-01-01T00-00-05.000.log").write_text(
        _event("gpupoc-observer/0.1.0", "list", "pods", "2026-01-01T00:00:01Z") + "\n")
    (tmp_path / "audit.log").write_text(_event("gpupoc-observer/0.1.0", "watch", "pods", "2026-01-01T00:00:06Z"))
    assert B.audit_requests(tmp_path / "audit.log").of("observer") == 2


def test_a_missing_audit_log_counts_nothing(tmp_path):
    assert B.audit_requests(tmp_path / "none.log").of("observer") == 0


def test_targets_pass_miss_and_not_verified():
    got = {t.name: t.verdict for t in B.judge(pods=1000, requests=7, bytes_read=5_000_000,
                                              full_lists_after_first=0, relists_after_gone=0, gone_answers=0,
                                              harness_seat_share=None, seat_why="no APF metrics")}
    assert got["observation requests per pod"] == "pass"
    assert got["observation bytes per pod"] == "pass"  # 5 KB per pod
    assert got["full LISTs after the first (relists after 410 apart)"] == "pass"
    assert got["a relist after 410"] == "not verified", "no 410 seen is not a pass"
    assert got["the harness's share of seat-seconds (creation and release apart)"] == "not verified"
    missed = {t.name: t.verdict for t in B.judge(pods=100, requests=300, bytes_read=10_000_000,
                                                 full_lists_after_first=12, relists_after_gone=0, gone_answers=2,
                                                 harness_seat_share=0.2)}
    assert set(missed.values()) == {"miss"}, missed
