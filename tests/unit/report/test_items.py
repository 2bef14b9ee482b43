"""Each item's verdict from synthetic evidence: a correctly behaving platform, then one fault at a time."""

import re

import pandas as pd
import pytest

from .conftest import GOOD_SCORES, built_root, write_later_run
from gpupoc.report import build_report
from gpupoc.report.models import Decision
from gpupoc.validation import synthetic as syn
from gpupoc.validation.models import FailureClass, Verdict


def test_correct_platform_goes_live_with_reasons(scored_report):
    r = scored_report.report
    bad = {i.id: (i.verdict.value, i.reason) for i in r.items if i.verdict is not Verdict.PASS}
    assert not bad, f"expected every item to pass, got {bad}"
    assert r.decision is Decision.GO_LIVE and r.decision_reasons == ["every item passed"]
    assert {s.status.value for s in r.scope} == {"go_live"}


def test_missing_scores_leave_experience_not_verified(good_report):
    r = good_report.report
    assert {r.item(i).verdict for i in ("ui_usability", "documentation", "training_cost")} == {Verdict.NOT_VERIFIED}
    assert r.decision is Decision.LATER_OPTIMIZATION


@pytest.fixture(scope="module")
def faults(tmp_path_factory):
    """``faults(test_class, mutate, **kw)``: the report of the good root with a later run of ``test_class`` whose
    tables ``mutate`` changed. The root is validated once per session (``built_root``) and the report built once
    per module: tests of the same fault share both (``faults.root`` gives a test a copy of the root of its own)."""
    reports = {}

    def root(test_class, mutate, dest, **kw):
        def build(r):
            tables = syn.good_tables(test_class)
            mutate(tables)
            write_later_run(r, test_class, tables, **kw)
        name = re.sub(r"\W+", "-", f"items-{test_class}-{mutate.__qualname__}-{sorted(kw.items())}")
        return built_root(tmp_path_factory, dest, name, build)

    def report(test_class, mutate, **kw):
        key = (test_class, mutate.__qualname__, repr(sorted(kw.items())))
        if key not in reports:
            r = root(test_class, mutate, tmp_path_factory.mktemp("fault") / "evidence", **kw)
            reports[key] = build_report(r, out_dir=r / "out", scorecard=GOOD_SCORES).report
        return reports[key]

    report.root = root
    return report


def _cross_tenant_logs(t):
    ap = t["access_probes"]
    m = ap["action"] == "read_logs"
    ap.loc[m, ["allowed", "http_status", "access_review_allowed"]] = [True, 200, False]


def _quota_not_enforced(t):
    t["quota_samples"].loc[t["quota_samples"].index[-1], "used"] = 10.0


def _logs_lost(t):
    t["failure_records"].loc[[0, 2], "logs_readable"] = False


def _events_dropped(t):
    t["failure_records"]["events"] = None


def _gpus_leak(t):
    t["failure_records"].loc[[0, 2], "gpu_release_seconds"] = None


def _audit_gaps(t):
    t["audit_matches"].loc[[1, 2], ["matched", "audit_event_id"]] = [False, None]


def _unexplained(t):
    t["explanations"]["explained"] = False
    t["explanations"]["platform_reason"] = None


def _lost_workload(t):
    t["workload_runs"].loc[2, ["phase", "finished_at"]] = ["Pending", None]


@pytest.mark.parametrize("test_class, mutate, item, failure_class", [
    ("tenant_isolation", _cross_tenant_logs, "permission_isolation", FailureClass.PRODUCT_GAP),
    ("tenant_isolation", _quota_not_enforced, "permission_isolation", FailureClass.PRODUCT_GAP),
    ("fault_recovery", _logs_lost, "failure_evidence", FailureClass.PRODUCT_GAP),
    ("fault_recovery", _events_dropped, "failure_evidence", FailureClass.PRODUCT_GAP),
    ("fault_recovery", _gpus_leak, "failure_evidence", FailureClass.PRODUCT_GAP),
    ("audit_trail", _audit_gaps, "task_records", FailureClass.PRODUCT_GAP),
    ("queue_congestion", _unexplained, "queue_explainability", FailureClass.PRODUCT_GAP),
    ("queue_congestion", _lost_workload, "task_records", FailureClass.PRODUCT_GAP),
], ids=["cross-tenant-logs", "quota-not-enforced", "logs-lost-on-failure", "events-dropped", "gpus-leak",
        "audit-gaps", "unexplained-waits", "lost-task"])
def test_fault_fails_its_must_item_and_postpones(faults, test_class, mutate, item, failure_class):
    r = faults(test_class, mutate)
    it = r.item(item)
    assert it.verdict is Verdict.FAIL, f"{item}: expected fail, got {it.verdict.value} ({it.reason})"
    assert it.failure_class is failure_class and it.reason
    assert any(e.kind == "validation" for e in it.evidence) and any(e.kind == "table" for e in it.evidence)
    assert r.decision is Decision.POSTPONE
    others = [i.id for i in r.items if i.verdict is not Verdict.PASS and i.id != item
              and i.id not in ("scheduling_policy",)]
    assert not others, f"only {item} should fail, also: {others}"


def test_cross_tenant_read_shows_the_offending_attempts(faults):
    it = faults("tenant_isolation", _cross_tenant_logs).item("permission_isolation")
    table = next(t for t in it.tables if t.title == "unexpected_outcomes")
    assert len(table.rows) == 6 and all(row[2] == "read_logs" for row in table.rows)
    answers = {f.label: f for f in it.figures}["expected_answers"]
    assert answers.out_of - answers.count == 6 and answers.check == "ISO-02"
    attempts = next(t for t in it.tables if t.title == "attempts")
    by_action = attempts.columns.index("read_logs") if "read_logs" in attempts.columns else None
    cells = ([row[by_action] for row in attempts.rows] if by_action is not None else
             next(row[1:] for row in attempts.rows if row[0] == "read_logs"))
    assert [c for c in cells if c is not None] == [200] * 6, "the security table shows each read that got through"


def test_priority_ignored_fails_scheduling_policy_and_limits_go_live(faults):
    def fifo(t):
        wr = t["workload_runs"]
        wr["pool"], wr["gpus"] = "training", 1
        wr["scheduled_at"] = [pd.Timestamp(syn.T0) + pd.Timedelta(seconds=12 + 5 * i) for i in range(len(wr))]
        wr["wait_seconds"] = [2.0 + 5 * i for i in range(len(wr))]
    r = faults("queue_congestion", fifo)
    it = r.item("scheduling_policy")
    assert it.verdict is Verdict.FAIL and "QC-10" in it.reason
    assert {f.label: f.value for f in it.figures}["overtaken_by_lower"] > 0
    assert r.decision is Decision.LIMITED_GO_LIVE


def test_unverified_table_makes_its_item_not_verified_and_postpones(faults):
    def drop(t):
        t["failure_records"] = None
    r = faults("fault_recovery", drop, not_verified={"failure_records": "events API unreachable"})
    it = r.item("failure_evidence")
    assert it.verdict is Verdict.NOT_VERIFIED and "events API unreachable" in it.reason
    assert r.decision is Decision.POSTPONE


def test_class_without_any_run_leaves_its_items_not_verified(tmp_path):
    from gpupoc.validation import validate_run

    root = tmp_path / "evidence"
    validate_run(syn.write_run(root, "utilization", "r1", syn.good_tables("utilization")))
    r = build_report(root, out_dir=tmp_path / "out").report
    assert r.item("utilization_reports").verdict is Verdict.PASS
    assert r.item("permission_isolation").verdict is Verdict.NOT_VERIFIED
    assert "no validated run of test class tenant_isolation" in r.item("permission_isolation").reason
    assert r.decision is Decision.POSTPONE


def test_single_team_utilization_fails_reports_as_scenario_mismatch(faults):
    def one_team(t):
        t["utilization"]["namespace"] = "team-nlp"
    it = faults("utilization", one_team).item("utilization_reports")
    assert it.verdict is Verdict.FAIL and it.failure_class is FailureClass.SCENARIO_MISMATCH


def test_stability_tracks_findings_that_come_and_go(faults, tmp_path):
    r = faults("fault_recovery", _logs_lost)
    assert "FR-07" in r.stability.new
    fr_runs = [s for s in r.stability.runs if s.test_class == "fault_recovery"]
    assert [s.checks_failed > 0 for s in fr_runs] == [False, True]
    from gpupoc.validation import validate_run

    tables = syn.good_tables("fault_recovery")
    root_copy = faults.root("fault_recovery", _logs_lost, tmp_path / "evidence")
    validate_run(syn.write_run(root_copy, "fault_recovery", "scheduled__3", tables,
                               window_end=syn.T0 + pd.Timedelta(hours=3)))
    r = build_report(root_copy, out_dir=root_copy / "out").report
    assert "FR-07" in r.stability.intermittent, "passed, failed, passed again: it came and went"
    assert "FR-07" not in r.stability.new


def test_gpus_leak_names_the_scenarios_whose_gpus_stayed_held(faults):
    it = faults("fault_recovery", _gpus_leak).item("failure_evidence")
    table = next(t for t in it.tables if t.title == "incomplete_records")
    assert sorted(row[0] for row in table.rows) == ["nonzero-exit", "oom"]
    assert "FR-10" in it.reason and "2 of 5 rows unexpected" in it.reason


def test_over_quota_submission_admitted_fails_isolation(faults):
    def admitted(t):
        ap = t["access_probes"]
        m = ap["action"] == "over_quota_blocked"
        ap.loc[m, ["action", "allowed", "http_status"]] = ["over_quota_admitted", True, 201]
    it = faults("tenant_isolation", admitted).item("permission_isolation")
    failed = {c.check_id for c in it.checks if c.verdict is Verdict.FAIL}
    assert {"ISO-02", "ISO-03", "ISO-10"} <= failed
