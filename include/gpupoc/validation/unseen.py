"""Checks over rows the pipeline could not see: a verdict only where the unseen rows cannot change it.

A wait that nothing observed (the observer took no snapshot while it lasted and the platform's events say
nothing of it) has no judgeable explanation: its ``explained`` is null, so GX's share leaves it out. A share
taken over the seen rows alone could pass a platform on waits nobody saw, or fail it for the observer's gap.
An expectation names its unseen rows in ``meta.unseen_when``::

    "unseen_when": {"column": "observed", "in": [false], "judged": "explained", "reason": "check.unseen_rows"}

With ``u`` unseen rows, ``good`` of ``n`` judged rows and the share ``mostly``, the check keeps GX's verdict
only if counting every unseen row as bad (for a pass) or as good (for a failure) would leave it the same;
otherwise it is NOT_VERIFIED with ``reason``, naming how many rows were unseen. ``judged`` rows are those whose
``scope`` column (the ``judged`` column by default) is not null; a value is good when it is true or a non-empty
text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from gpupoc.validation.models import CheckOutcome, Verdict
from gpupoc.validation.reasons import word

if TYPE_CHECKING:
    import pandas as pd

UNSEEN_WHEN = "unseen_when"


@dataclass(frozen=True)
class Unseen:
    """How an expectation's table marks its unseen rows, and which column it judges."""

    column: str
    values: tuple[Any, ...]
    judged: str
    scope: str
    reason: str

    @classmethod
    def of(cls, meta: dict[str, Any]) -> "Unseen | None":
        spec = meta.get(UNSEEN_WHEN)
        if not isinstance(spec, dict):
            return None
        judged = str(spec["judged"])
        return cls(str(spec["column"]), tuple(spec["in"]), judged, str(spec.get("scope") or judged),
                   str(spec.get("reason") or "check.unseen_rows"))

    def counts(self, frame: pd.DataFrame) -> tuple[int, int, int]:
        """(unseen rows, judged rows, good judged rows) of ``frame``."""
        if frame.empty or self.column not in frame or self.judged not in frame or self.scope not in frame:
            return 0, 0, 0
        unseen = int(frame[self.column].isin(list(self.values)).sum())
        judged = frame[frame[self.scope].notna()]
        good = sum(1 for v in judged[self.judged] if _good(v))
        return unseen, len(judged), good


def _good(v: Any) -> bool:
    return v is True or v == True or (isinstance(v, str) and bool(v.strip()))  # noqa: E712


def decided(verdict: Verdict, unseen: int, judged: int, good: int, mostly: float) -> bool:
    """Whether ``verdict`` would stand whatever the ``unseen`` rows turned out to be."""
    total = judged + unseen
    if verdict is Verdict.PASS:
        return good / total >= mostly
    if verdict is Verdict.FAIL:
        return (good + unseen) / total < mostly
    return False


def settle_unseen(check: CheckOutcome, meta: dict[str, Any], frame: Callable[[], pd.DataFrame],
                  mostly: float) -> CheckOutcome:
    """``check`` as NOT_VERIFIED when rows nobody saw could turn its verdict; otherwise unchanged."""
    spec = Unseen.of(meta)
    if spec is None or check.verdict not in (Verdict.PASS, Verdict.FAIL, Verdict.NOT_VERIFIED):
        return check
    unseen, judged, good = spec.counts(frame())
    if not unseen or decided(check.verdict, unseen, judged, good, mostly):
        return check
    args = {"unseen": unseen, "n": judged + unseen, "good": good}
    return check.model_copy(update={"verdict": Verdict.NOT_VERIFIED, "reason_code": spec.reason,
                                    "reason_args": args, "reason": word(spec.reason, args),
                                    "failure_class": None})


def resolved_mostly(kwargs: dict[str, Any], params: dict[str, Any]) -> float:
    """The expectation's ``mostly`` (a number, or a ``$PARAMETER`` named in ``params``), 1.0 when absent."""
    m = kwargs.get("mostly", 1.0)
    if isinstance(m, dict):
        m = params.get(m.get("$PARAMETER"), 1.0)
    try:
        return float(m)
    except (TypeError, ValueError):
        return 1.0
