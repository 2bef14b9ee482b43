"""Conditional checks: not applicable when their case never arose in collected evidence, with its reason;
never when the evidence is missing, when the case cannot be told, or when the check passed or failed."""

import pandas as pd
import pytest

from gpupoc.validation import synthetic as syn
from gpupoc.validation.conditions import Case, lint, settle
from gpupoc.validation.models import CheckOutcome, Tier, Verdict
from gpupoc.validation.runner import validate_run
from tests.unit.validation import only


def _check(summary, check_id):
    return next(c for c in summary.checks if c.check_id == check_id)


# The suites of the checks this file judges (TR-03; QC-04 to QC-07 and QC-11; QC-08).
SUITES = ("common.workload_runs", "queue_congestion.explanations", "queue_congestion.queue_snapshots")


def _validated(tmp_path, test_class, mutate=None, **kw):
    tables = syn.good_tables(test_class)
    if mutate:
        mutate(tables)
    return validate_run(syn.write_run(tmp_path / "evidence", test_class, "r1", tables, **kw),
                        suites_dir=only.suites(tmp_path / "suites", *SUITES))


def test_nothing_deleted_and_no_eta_offered_read_not_applicable_with_their_reasons(tmp_path):
    s = _validated(tmp_path, "queue_congestion")
    tr03, qc07 = _check(s, "TR-03"), _check(s, "QC-07")
    assert (tr03.verdict, tr03.reason, tr03.reason_code) == (Verdict.NOT_APPLICABLE, "no workload was deleted",
                                                            "na.nothing_deleted")
    assert (qc07.verdict, qc07.reason) == (Verdict.NOT_APPLICABLE, "the platform offers no expected wait")
    assert tr03.failure_class is None


def test_a_deletion_without_its_deleter_fails_the_check_that_was_not_applicable(tmp_path):
    def deleted(t):
        wr = t["workload_runs"]
        wr.loc[0, ["outcome", "outcome_by"]] = ["deleted", None]
    assert _check(_validated(tmp_path, "queue_congestion", deleted), "TR-03").verdict is Verdict.FAIL


def test_an_eta_offered_but_never_measured_is_not_verified_not_inapplicable(tmp_path):
    def offered(t):
        t["explanations"]["eta_offered"] = True  # the platform gave ETAs; no start was measured against them
    qc07 = _check(_validated(tmp_path, "queue_congestion", offered), "QC-07")
    assert qc07.verdict is Verdict.NOT_VERIFIED and qc07.reason_code == "check.no_values"


def test_an_eta_within_tolerance_passes(tmp_path):
    def accurate(t):
        t["explanations"]["eta_offered"] = True
        t["explanations"]["eta_error_seconds"] = 5.0
    assert _check(_validated(tmp_path, "queue_congestion", accurate), "QC-07").verdict is Verdict.PASS


def test_a_table_not_collected_stays_not_verified(tmp_path):
    def drop(t):
        t["workload_runs"] = None
    tr03 = _check(_validated(tmp_path, "queue_congestion", drop,
                             not_verified={"workload_runs": "pods API unreachable"}), "TR-03")
    assert tr03.verdict is Verdict.NOT_VERIFIED and "pods API unreachable" in tr03.reason


def test_an_outcome_unknown_for_a_row_is_not_read_as_nothing_deleted(tmp_path):
    def unknown(t):
        t["workload_runs"].loc[3, "outcome"] = None
    assert _check(_validated(tmp_path, "queue_congestion", unknown), "TR-03").verdict is Verdict.NOT_VERIFIED


def test_an_older_table_without_the_case_column_stays_not_verified(tmp_path):
    def older(t):
        del t["explanations"]["eta_offered"]
    assert _check(_validated(tmp_path, "queue_congestion", older), "QC-07").verdict is Verdict.NOT_VERIFIED


QUEUE_CHECKS = ("QC-04", "QC-05", "QC-06", "QC-08", "QC-11")


def _nothing_waited(t):
    """A wave that fit the cluster: no workload waited long enough to need an explanation, no look saw a wait."""
    ex = t["explanations"]
    ex["needs_explanation"] = False
    ex[["platform_reason", "platform_message", "explained"]] = None
    t["queue_snapshots"] = t["queue_snapshots"].iloc[0:0]


def test_a_wave_that_never_queued_reads_not_applicable_for_queue_explainability_not_failed(tmp_path):
    s = _validated(tmp_path, "queue_congestion", _nothing_waited)
    for cid in QUEUE_CHECKS:
        c = _check(s, cid)
        assert (c.verdict, c.reason_code) == (Verdict.NOT_APPLICABLE, "na.no_wait"), (cid, c.verdict, c.reason)
    assert "no workload waited longer than a scheduling pass" in _check(s, "QC-08").reason
    explanations = next(p for p in s.inputs if p.endswith("explanations.parquet"))
    assert s.inputs[explanations], "the table that told the case is sealed with the inputs"


def test_a_wait_no_snapshot_saw_still_fails_the_queue_observation(tmp_path):
    def unseen(t):
        t["queue_snapshots"] = t["queue_snapshots"].iloc[0:0]  # the synthetic wave's waits stay
    s = _validated(tmp_path, "queue_congestion", unseen)
    assert _check(s, "QC-08").verdict is Verdict.FAIL
    assert all(_check(s, c).verdict is Verdict.PASS for c in ("QC-04", "QC-05", "QC-11"))


def test_no_wait_cannot_be_told_without_the_explanations(tmp_path):
    def lost(t):
        _nothing_waited(t)
        t["explanations"] = None
    s = _validated(tmp_path, "queue_congestion", lost, not_verified={"explanations": "collector failed"})
    assert _check(s, "QC-08").verdict is Verdict.FAIL, "an empty snapshot table and no way to tell: not excused"
    assert _check(s, "QC-04").verdict is Verdict.NOT_VERIFIED


def test_a_wait_the_explanations_name_without_its_column_is_not_excused(tmp_path):
    def older(t):
        _nothing_waited(t)
        del t["explanations"]["needs_explanation"]
    s = _validated(tmp_path, "queue_congestion", older)
    assert _check(s, "QC-08").verdict is Verdict.FAIL
    assert _check(s, "QC-05").verdict is Verdict.NOT_VERIFIED


@pytest.mark.parametrize("frame,arose", [
    (pd.DataFrame({"outcome": ["succeeded", "failed"]}), False),
    (pd.DataFrame({"outcome": ["succeeded", "deleted"]}), True),
    (pd.DataFrame({"outcome": ["succeeded", None]}), None),
    (pd.DataFrame({"other": [1]}), None),
    (pd.DataFrame({"outcome": []}), None),
])
def test_the_case_arose_or_not_or_cannot_be_told(frame, arose):
    assert Case("outcome", ("deleted",), "na.nothing_deleted").arose(frame) is arose


def _outcome(verdict, code):
    return CheckOutcome(check_id="TR-03", suite="s", table="workload_runs", expectation_type="e", tier=Tier.MUST,
                        item="task_records", signal="s", verdict=verdict, reason_code=code)


@pytest.mark.parametrize("verdict,code", [(Verdict.PASS, "check.rows"), (Verdict.FAIL, "check.not_met_rows"),
                                          (Verdict.NOT_VERIFIED, "check.exception")])
def test_only_nothing_to_check_becomes_not_applicable(verdict, code):
    meta = {"applies_when": {"column": "outcome", "in": ["deleted"], "reason": "na.nothing_deleted"}}
    frame = pd.DataFrame({"outcome": ["succeeded"]})
    assert settle(_outcome(verdict, code), meta, lambda: frame).verdict is verdict


def test_a_case_told_by_another_table_reads_that_table():
    meta = {"applies_when": {"table": "explanations", "column": "needs_explanation", "in": [True],
                             "reason": "na.no_wait"}}
    empty = _outcome(Verdict.FAIL, "check.not_met_observed").model_copy(update={"observed": {"observed_value": 0}})
    asked = []

    def table(name):
        asked.append(name)
        return pd.DataFrame({"needs_explanation": [False, False]})
    assert settle(empty, meta, lambda: pd.DataFrame(), table).verdict is Verdict.NOT_APPLICABLE
    assert asked == ["explanations"]
    some = _outcome(Verdict.FAIL, "check.not_met_observed").model_copy(update={"observed": {"observed_value": 2}})
    assert settle(some, meta, lambda: pd.DataFrame(), table).verdict is Verdict.FAIL, "rows that failed stay failed"


def test_a_bad_applies_when_is_named_with_the_fix():
    errs = lint("x.json: expectations[0]", {"applies_when": {"column": "", "in": [], "reason": "na.unknown",
                                                             "table": 3}})
    assert any("applies_when.table: expected the name of the run's table" in e for e in errs)
    assert any("applies_when.column: missing" in e for e in errs)
    assert any("applies_when.in: expected a non-empty list" in e for e in errs)
    assert any("applies_when.reason: unknown reason code 'na.unknown'" in e and "reasons.json" in e for e in errs)
