"""Rows nobody observed: a share check keeps its verdict only where they cannot turn it; otherwise it is not
verified, naming how many rows were unseen."""

import pytest

from gpupoc.validation import synthetic as syn
from gpupoc.validation.models import Verdict
from gpupoc.validation.runner import validate_run
from tests.unit.validation import only
from gpupoc.validation.unseen import decided, resolved_mostly


def _check(summary, check_id):
    return next(c for c in summary.checks if c.check_id == check_id)


def _validated(tmp_path, unseen: int, explained_of_seen: bool = True, coverage: float = 0.95):
    """The good congestion evidence with the last ``unseen`` waiting rows unobserved (explained null)."""
    tables = syn.good_tables("queue_congestion")
    ex = tables["explanations"]
    ex["observed"] = [None if e is None else True for e in ex["explained"]]
    last = ex.index[-unseen:] if unseen else []
    ex.loc[last, ["explained", "platform_reason", "platform_message", "observed"]] = [None, None, None, False]
    if not explained_of_seen:
        ex.loc[ex.index[2:5], "explained"] = False
    run = syn.write_run(tmp_path / "evidence", "queue_congestion", "r1", tables)
    return validate_run(run, suites_dir=only.suites(tmp_path / "suites", "queue_congestion.explanations"),
                        parameters={"explanation_coverage": coverage})


def test_unseen_waits_that_could_turn_a_pass_make_it_not_verified_with_their_count(tmp_path):
    qc05 = _check(_validated(tmp_path, unseen=2), "QC-05")  # 8 of 10 seen and explained; 2 unseen at 0.95
    assert qc05.verdict is Verdict.NOT_VERIFIED and qc05.reason_code == "check.unseen_rows"
    assert qc05.reason_args == {"unseen": 2, "n": 10, "good": 8} and qc05.failure_class is None
    assert "2 of 10 rows were not observed" in qc05.reason
    assert _check(_validated(tmp_path / "b", unseen=2), "QC-06").verdict is Verdict.NOT_VERIFIED


def test_unseen_waits_that_cannot_turn_the_verdict_leave_it(tmp_path):
    assert _check(_validated(tmp_path, unseen=1, coverage=0.9), "QC-05").verdict is Verdict.PASS  # 9/10 >= 0.9
    failed = _check(_validated(tmp_path / "b", unseen=1, explained_of_seen=False), "QC-05")
    assert failed.verdict is Verdict.FAIL  # 6 of 9 seen explained: even the unseen one explained leaves 7/10


def test_without_unseen_rows_gx_decides_alone(tmp_path):
    assert _check(_validated(tmp_path, unseen=0), "QC-05").verdict is Verdict.PASS


def test_every_wait_unseen_is_not_verified_for_that_reason(tmp_path):
    qc05 = _check(_validated(tmp_path, unseen=10), "QC-05")
    assert qc05.verdict is Verdict.NOT_VERIFIED and qc05.reason_code == "check.unseen_rows"


@pytest.mark.parametrize("verdict, unseen, judged, good, mostly, stands", [
    (Verdict.PASS, 1, 19, 19, 0.95, True), (Verdict.PASS, 2, 18, 18, 0.95, False),
    (Verdict.FAIL, 1, 9, 5, 0.9, True), (Verdict.FAIL, 2, 18, 17, 0.9, False),
    (Verdict.NOT_VERIFIED, 3, 0, 0, 0.9, False)])
def test_a_verdict_stands_only_when_no_outcome_of_the_unseen_rows_turns_it(verdict, unseen, judged, good, mostly,
                                                                           stands):
    assert decided(verdict, unseen, judged, good, mostly) is stands


def test_mostly_comes_from_the_number_or_the_named_parameter():
    assert resolved_mostly({"mostly": 0.8}, {}) == 0.8
    assert resolved_mostly({"mostly": {"$PARAMETER": "cov"}}, {"cov": 0.7}) == 0.7
    assert resolved_mostly({}, {}) == 1.0
