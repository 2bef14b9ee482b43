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
    named = [_named(r, column) for r in hits.head(MAX_NAMED).to_dict("records")]
    if not named:
        return check
    args = {**check.reason_args, "sample": repr(named)}
    return check.model_copy(update={"reason_args": args, "reason": word(check.reason_code, args)})


def _named(row: dict[str, Any], column: str) -> str:
    """``namespace/pod: value``; a missing value names the pod alone (no "nan" in any language)."""
    import pandas as pd

    pod = f"{row['namespace']}/{row['pod']}" if "namespace" in row else str(row["pod"])
    value = row[column]
    return pod if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)) else f"{pod}: {value}"
