"""Not applicable: shown apart from not verified, never a pass by itself, never standing for missing evidence.

A conditional check whose case never arose is neutral beside checks that passed; an item left with nothing
but such checks is not applicable and decides as a not verified one (a must item postpones); a class that
did not run keeps every check of its suites not verified.
"""

import shutil

import pytest
from junitparser import JUnitXml, Skipped

from gpupoc.report import build_report
from gpupoc.report.items import _verdict_from_checks
from gpupoc.report.models import Decision, FindingTarget, ItemResult
from gpupoc.report.rules import DecisionRules, decide, findings, outcome_rule
from gpupoc.report.summary import class_status
from gpupoc.validation.models import CheckOutcome, Tier, Verdict


def check(check_id, verdict, optional=False, test_class="queue_congestion"):
    return CheckOutcome(check_id=check_id, suite="s", table="t", expectation_type="e", tier=Tier.MUST,
                        item="task_records", signal="s", verdict=verdict, optional=optional,
                        reason="no workload was deleted" if verdict is Verdict.NOT_APPLICABLE else "why",
                        test_class=test_class)


NA, PASS, NV = Verdict.NOT_APPLICABLE, Verdict.PASS, Verdict.NOT_VERIFIED


@pytest.mark.parametrize("verdicts,expected", [
    ([PASS, NA], PASS),                     # neutral beside a check that passed
    ([NA], NA),                             # alone it proves nothing: never a pass
    ([NA, NA], NA),
    ([NA, NV], NV),                         # never hides a check that could not be made
    ([PASS, NA, Verdict.FAIL], Verdict.FAIL),
])
def test_an_item_s_verdict_with_not_applicable_checks(verdicts, expected):
    it = _verdict_from_checks("task_records", Tier.MUST, [check(f"TR-0{i}", v) for i, v in enumerate(verdicts)], [])
    assert it.verdict is expected
    assert class_status(it.checks) is expected
    if expected in (PASS, NA) and NA in verdicts:
        assert it.reason.startswith("not applicable: ") and "no workload was deleted" in it.reason


def test_only_optional_checks_not_verified_are_no_pass_either():
    it = _verdict_from_checks("task_records", Tier.MUST, [check("TR-03", NV, optional=True)], [])
    assert it.verdict is NV and "TR-03: why" in it.reason


def test_a_missing_class_keeps_its_item_not_verified_whatever_else_does_not_apply():
    it = _verdict_from_checks("task_records", Tier.MUST, [check("TR-03", NA)], ["audit_trail"])
    assert it.verdict is NV and "audit_trail" in it.reason


def test_a_must_item_that_is_only_not_applicable_postpones_as_not_verified_does():
    na = ItemResult(id="check:TR-03", tier=Tier.MUST, verdict=NA, reason="not applicable: TR-03: nothing deleted")
    decision, reasons = decide([na], DecisionRules())
    assert decision is Decision.POSTPONE and outcome_rule(na, DecisionRules()) is Decision.POSTPONE
    assert "not_applicable" in reasons[0] and "nothing deleted" in reasons[0]
    assert [(f.item, f.target) for f in findings([na])] == [("check:TR-03", FindingTarget.SECOND_VERIFICATION)]


def test_the_report_counts_not_applicable_apart_with_reasons_once_per_check(good_report):
    r = good_report.report
    cov = r.coverage
    named = {e.check: e for e in cov.not_applicable_checks}
    assert named["TR-03"].test_classes == ["queue_congestion", "utilization", "audit_trail"]
    assert named["TR-03"].reason == "no workload was deleted"
    assert named["QC-07"].reason == "the platform offers no expected wait"
    assert cov.not_applicable == sum(len(e.test_classes) for e in cov.not_applicable_checks)
    assert {e.check for e in cov.not_verified_checks} == {"ui_usability", "documentation", "training_cost"}
    assert r.item("task_records").verdict is PASS, "TR-01 and TR-02 passed beside it"
    assert all(c.verdict is not PASS for c in r.item("task_records").checks if c.check_id == "TR-03")


def test_not_applicable_is_said_apart_in_every_format(good_report):
    out = good_report.out_dir
    summary = (out / "summary.html").read_text()
    assert "Not applicable (the case never arose)" in summary and "no workload was deleted" in summary
    md = (out / "report.md").read_text()
    assert "the platform offers no expected wait" in md
    skipped = [s for suite in JUnitXml.fromfile(str(out / "report.junit.xml")) for case in suite
               if case.name.startswith("TR-03") for s in case.result if isinstance(s, Skipped)]
    assert len(skipped) == 3 and all(s.message == "not applicable: no workload was deleted" for s in skipped)


def test_a_class_that_did_not_run_keeps_its_conditional_checks_not_verified(good_root, tmp_path):
    root = tmp_path / "evidence"
    shutil.copytree(good_root, root, ignore=shutil.ignore_patterns("report", "poc_queue_congestion"))
    r = build_report(root, out_dir=tmp_path / "out").report
    nv = {(e.check, tc) for e in r.coverage.not_verified_checks for tc in e.test_classes}
    na = {(e.check, tc) for e in r.coverage.not_applicable_checks for tc in e.test_classes}
    assert ("QC-07", "queue_congestion") in nv and ("TR-03", "queue_congestion") in nv
    assert ("TR-03", "queue_congestion") not in na and ("TR-03", "utilization") in na
    assert r.item("scheduling_policy").verdict is NV
