"""A failed check names the rows it failed on: "e.g. ['team-nlp/qc-v-sweep-1g-003-ab12cd34: lost']", not only
the values GX saw ("e.g. ['lost']"), where its table names pods and the check reads every row of one column
(no row condition). A reviewer reading TR-01's failure then knows which attempt was lost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from gpupoc.validation.models import CheckOutcome, Verdict
from gpupoc.validation.reasons import word

if TYPE_CHECKING:
    import pandas as pd

SAMPLED = "check.not_met_rows_sample"
MAX_NAMED = 5


def name_rows(check: CheckOutcome, kwargs: dict[str, Any], frame: Callable[[], "pd.DataFrame"]) -> CheckOutcome:
    """``check`` with its sample naming the failing rows' pods (unchanged when it cannot tell them)."""
    column, bad = kwargs.get("column"), check.observed.get("partial_unexpected_list")
    if check.verdict is not Verdict.FAIL or check.reason_code != SAMPLED or not column or not bad \
            or kwargs.get("row_condition"):
        return check
    rows = frame()
    if "pod" not in rows.columns or column not in rows.columns:
        return check
    hits = rows[rows[column].isin(list(bad))]
    named = [f"{r['namespace']}/{r['pod']}: {r[column]}" if "namespace" in rows.columns else f"{r['pod']}: {r[column]}"
             for r in hits.head(MAX_NAMED).to_dict("records")]
    if not named:
        return check
    args = {**check.reason_args, "sample": repr(named)}
    return check.model_copy(update={"reason_args": args, "reason": word(check.reason_code, args)})
