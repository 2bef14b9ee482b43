"""Conditional checks: a check that applies only when its case arose.

"Every deleted workload names who deleted it" has nothing to judge when nothing was deleted; "where the
platform offers an expected wait" has nothing to judge on a platform that offers none. An expectation names
its case in ``meta.applies_when``::

    "applies_when": {"column": "outcome", "in": ["deleted"], "reason": "na.nothing_deleted"}

When GX found nothing to check (no rows after the row condition, or a column with no values), the table was
collected and holds rows, and no row's ``column`` is one of the values, the case never arose: the check is
NOT_APPLICABLE with ``reason`` (a code of ``reasons.json``). Anything else keeps GX's outcome: a table that
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


@dataclass(frozen=True)
class Case:
    """The case a conditional check judges: rows whose ``column`` is one of ``values``."""

    column: str
    values: tuple[Any, ...]
    reason: str

    @classmethod
    def of(cls, meta: dict[str, Any]) -> "Case | None":
        spec = meta.get(APPLIES_WHEN)
        if not isinstance(spec, dict):
            return None
        return cls(str(spec["column"]), tuple(spec["in"]), str(spec["reason"]))

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
    if spec.get("reason") not in templates("en"):
        errs.append(f"{at}.reason: unknown reason code {spec.get('reason')!r}; add it to validation/reasons.json")
    return errs


def settle(check: CheckOutcome, meta: dict[str, Any], frame: Callable[[], pd.DataFrame]) -> CheckOutcome:
    """``check`` as NOT_APPLICABLE when it found nothing to check because its case never arose in ``frame()``
    (the validated table, read only when needed); otherwise unchanged."""
    case = Case.of(meta)
    if case is None or check.verdict is not Verdict.NOT_VERIFIED or check.reason_code not in NOTHING_TO_CHECK:
        return check
    if case.arose(frame()) is not False:
        return check
    return check.model_copy(update={"verdict": Verdict.NOT_APPLICABLE, "reason_code": case.reason,
                                    "reason_args": {}, "reason": word(case.reason), "failure_class": None})
