"""QC-13 over preemptions whose preemptor the platform's records did not resolve: never a pass, never a
failure on their account."""

from gpupoc.validation import synthetic as syn
from gpupoc.validation.models import Verdict
from gpupoc.validation.runner import validate_run


def _qc13(tmp_path, judged: list):
    """The good congestion evidence with its first rows preempted: each judged True/False, or None when its
    preemptor was unresolved."""
    tables = syn.good_tables("queue_congestion")
    runs = tables["workload_runs"]
    runs["preempted_by_higher"], runs["preemption_judged"] = None, None
    for i, v in enumerate(judged):
        runs.loc[i, ["outcome", "preempted_by_higher", "preemption_judged"]] = \
            ["preempted", v, "unresolved" if v is None else "judged"]
    summary = validate_run(syn.write_run(tmp_path / "evidence", "queue_congestion", "r1", tables))
    return next(c for c in summary.checks if c.check_id == "QC-13")


def test_an_unresolved_preemptor_beside_rightful_ones_leaves_qc13_not_verified_naming_it(tmp_path):
    qc13 = _qc13(tmp_path, [True, True, None])
    assert qc13.verdict is Verdict.NOT_VERIFIED and qc13.reason_code == "check.unresolved_preemptors"
    assert qc13.reason_args == {"unseen": 1, "n": 3, "good": 2}


def test_every_preemptor_unresolved_is_not_verified_never_failed(tmp_path):
    qc13 = _qc13(tmp_path, [None, None])
    assert qc13.verdict is Verdict.NOT_VERIFIED and qc13.reason_code == "check.unresolved_preemptors"


def test_a_wrongful_preemption_fails_qc13_whatever_the_unresolved_ones(tmp_path):
    assert _qc13(tmp_path, [False, None]).verdict is Verdict.FAIL


def test_rightful_preemptions_all_resolved_pass_qc13(tmp_path):
    assert _qc13(tmp_path, [True, True]).verdict is Verdict.PASS
