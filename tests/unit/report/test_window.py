"""Stability across the window, from stored run stats."""

from gpupoc.report.window import stability
from gpupoc.evidence.reader import RunEvidence
from gpupoc.validation.models import CheckOutcome, SuiteOutcome, Tier, ValidationSummary, Verdict
from gpupoc.validation import synthetic as syn


def _summary(run_dir, failed):
    checks = [CheckOutcome(check_id=c, suite="s", table="t", expectation_type="x", tier=Tier.MUST, item="i",
                           signal="s", verdict=Verdict.FAIL if c in failed else Verdict.PASS)
              for c in ("FR-01", "FR-02", "FR-03", "FR-04")]
    return ValidationSummary(run_dir=str(run_dir), dag_id="d", run_id="r", test_class="fault_recovery",
                             suites=[SuiteOutcome(suite="s", table="t", verified=True, result_path="x", checks=checks)])


def test_findings_are_persistent_new_resolved_or_intermittent(tmp_path):
    pattern = [{"FR-01", "FR-02", "FR-04"}, {"FR-01"}, {"FR-01", "FR-03", "FR-04"}, {"FR-01"}]
    runs, sums = [], {}
    for i, failed in enumerate(pattern):
        rd = syn.write_run(tmp_path, "fault_recovery", f"r{i}", {"failure_records": syn.failure_records()},
                           window_end=syn.T0 + syn.timedelta(hours=i + 1))
        ev = RunEvidence.open(rd)
        runs.append(ev)
        sums[str(rd)] = _summary(rd, failed)
    st = stability(runs, sums)
    assert st.persistent == ["FR-01"]
    assert st.resolved == ["FR-02"]  # failed first, passes since
    assert st.intermittent == ["FR-03", "FR-04"]  # came and went
    assert [r.checks_failed for r in st.runs] == [3, 1, 3, 1]


def test_unvalidated_runs_are_listed_as_such(tmp_path):
    rd = syn.write_run(tmp_path, "queue_congestion", "r0", {"workload_runs": syn.workload_runs()})
    st = stability([RunEvidence.open(rd)], {})
    assert st.runs[0].validated is False and st.runs[0].success_rate == 1.0 and st.runs[0].wait_p50_seconds


def test_the_success_rate_counts_wave_items_by_their_last_attempt(tmp_path):
    import pandas as pd

    wr = syn.workload_runs()
    first = wr.iloc[[4, 5]].assign(outcome="preempted", final_attempt=False, phase="Running", attempt=1)
    again = wr.iloc[[4, 5]].assign(attempt=2)
    lost = wr.iloc[[6]].assign(outcome="failed", phase="Failed")
    runs = pd.concat([wr.drop(index=[4, 5, 6]), first, again, lost], ignore_index=True)
    rd = syn.write_run(tmp_path, "queue_congestion", "r0", {"workload_runs": runs})
    st = stability([RunEvidence.open(rd)], {}).runs[0]
    assert st.workloads == 14 and st.success_rate == round(11 / 12, 4), "two preemptions resubmitted, one failure"
