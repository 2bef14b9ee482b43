"""A failed check names the pods of the rows it failed on (TR-01 names the lost attempt), and leaves every
other check as it was."""

from __future__ import annotations

import pandas as pd

from gpupoc.validation.models import CheckOutcome, Tier, Verdict
from gpupoc.validation.named_rows import name_rows
from gpupoc.validation.reasons import word

ROWS = pd.DataFrame([{"namespace": "team-nlp", "pod": "qc-a-1", "outcome": "succeeded"},
                     {"namespace": "team-nlp", "pod": "qc-b-1", "outcome": "lost"}])


def check(verdict=Verdict.FAIL, code="check.not_met_rows_sample", sample=("lost",)) -> CheckOutcome:
    args = {"bad": 1, "n": 2, "sample": repr(list(sample))}
    return CheckOutcome(check_id="TR-01", suite="common.workload_runs", table="workload_runs",
                        expectation_type="expect_column_values_to_be_in_set", tier=Tier.MUST, item="task_records",
                        signal="no task lost", verdict=verdict, reason=word(code, args), reason_code=code,
                        reason_args=args, observed={"partial_unexpected_list": list(sample)})


def test_a_failed_check_names_the_pod_of_each_failing_row():
    named = name_rows(check(), {"column": "outcome"}, lambda: ROWS)
    assert named.reason == "not met: 1 of 2 rows unexpected, e.g. ['team-nlp/qc-b-1: lost']"
    assert named.verdict is Verdict.FAIL and named.reason_args["bad"] == 1


def test_a_check_it_cannot_name_rows_for_stays_as_it_was():
    failed = check()
    assert name_rows(failed, {"column": "outcome", "row_condition": {"x": 1}}, lambda: ROWS) == failed
    assert name_rows(failed, {"column": "outcome"}, lambda: ROWS.drop(columns=["pod"])) == failed
    passed = check(verdict=Verdict.PASS, code="check.rows")
    assert name_rows(passed, {"column": "outcome"}, lambda: ROWS) == passed
