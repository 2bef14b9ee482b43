"""Conditional checks: a check that applies only when its case arose.

"Every deleted workload names who deleted it" has nothing to judge when nothing was deleted; "where the
platform offers an expected wait" has nothing to judge on a platform that offers none. An expectation names
its case in ``meta.applies_when``::

    "applies_when": {"column": "outcome", "in": ["deleted"], "reason": "na.nothing_deleted"}

The case may be told by another table of the same run (``"table": "explanations"``): "the queue was observed
while workloads waited" has no snapshot to look at when nothing waited, and whether anything waited is in the
run's explanations.

When GX found nothing to check (no rows after the row condition, a column with no values, or an empty table),
the case's table was collected and holds rows, and no row's ``column`` is one of the values, the case never
arose: the check is NOT_APPLICABLE with ``reason`` (a code of ``reasons.json``). Anything else keeps GX's outcome: a table that
was not collected, an empty table, a missing column, or a null where the case is decided stays NOT VERIFIED,
so a gap in the evidence never reads as a case that did not arise, and a pass or a failure stays what it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from gpupoc.validation.models import CheckOutcome, Verdict
from gpupoc.validation.reasons import templates, word

if TYPE_CHECKING:
    import pandas as pd

APPLIES_WHEN = "applies_when"
NOTHING_TO_CHECK = ("check.no_rows", "check.no_values")  # what GX found when the case never arose
EMPTY_TABLE = "check.not_met_observed"  # a row count expectation on an empty table (its value: 0)


@dataclass(frozen=True)
class Case:
    """The case a conditional check judges: rows whose ``column`` is one of ``values`` (in ``table``; None: the
    table the check validates)."""

    column: str
    values: tuple[Any, ...]
    reason: str
    table: str | None = None

    @classmethod
    def of(cls, meta: dict[str, Any]) -> "Case | None":
        spec = meta.get(APPLIES_WHEN)
        if not isinstance(spec, dict):
            return None
        table = spec.get("table")
        return cls(str(spec["column"]), tuple(spec["in"]), str(spec["reason"]), str(table) if table else None)

    def arose(self, frame: pd.DataFrame) -> bool | None:
        """True when a row is of the case, False when none is, None when the table cannot tell (no rows, no
        such column, or a null in it)."""
        if frame.empty or self.column not in frame:
            return None
        col = frame[self.column]
        if col.isna().any():
            return None
        return bool(col.isin(list(self.values)).any())


def lint(where: str, meta: dict[str, Any]) -> list[str]:
    """Problems with an expectation's ``applies_when``, as ``where.meta.applies_when...: message`` lines."""
    spec = meta.get(APPLIES_WHEN)
    if spec is None:
        return []
    at = f"{where}.meta.{APPLIES_WHEN}"
    if not isinstance(spec, dict):
        return [f"{at}: expected a mapping with column, in and reason"]
    errs = []
    if not isinstance(spec.get("column"), str) or not spec.get("column"):
        errs.append(f"{at}.column: missing; name the column that tells whether the case arose")
    if not isinstance(spec.get("in"), list) or not spec.get("in"):
        errs.append(f"{at}.in: expected a non-empty list of the values that make a row of the case")
    if "table" in spec and (not isinstance(spec["table"], str) or not spec["table"]):
        errs.append(f"{at}.table: expected the name of the run's table that tells whether the case arose")
    if spec.get("reason") not in templates("en"):
        errs.append(f"{at}.reason: unknown reason code {spec.get('reason')!r}; add it to validation/reasons.json")
    return errs


def settle(check: CheckOutcome, meta: dict[str, Any], frame: Callable[[], pd.DataFrame],
           table: Callable[[str], pd.DataFrame] | None = None) -> CheckOutcome:
    """``check`` as NOT_APPLICABLE when it found nothing to check because its case never arose in ``frame()``
    (the validated table, read only when needed) or in ``table(name)`` (the run's table the case names: empty
    when it was not collected or changed); otherwise unchanged."""
    case = Case.of(meta)
    if case is None or check.verdict is Verdict.PASS or not _nothing_to_check(check, case):
        return check
    where = frame() if case.table is None or table is None else table(case.table)
    if case.arose(where) is not False:
        return check
    return check.model_copy(update={"verdict": Verdict.NOT_APPLICABLE, "reason_code": case.reason,
                                    "reason_args": {}, "reason": word(case.reason), "failure_class": None})


def _nothing_to_check(check: CheckOutcome, case: Case) -> bool:
    """GX found nothing to check: no rows or no values; for a case told by another table, also a row count of
    zero (the validated table is empty because the case never arose)."""
    if check.verdict is Verdict.NOT_VERIFIED and check.reason_code in NOTHING_TO_CHECK:
        return True
    return (case.table is not None and check.verdict is Verdict.FAIL and check.reason_code == EMPTY_TABLE
            and (check.observed or {}).get("observed_value") == 0)
