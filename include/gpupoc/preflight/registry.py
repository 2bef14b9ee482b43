"""The preflight's checks: a small registry of typed functions, run in the order they were registered.

Add a check with the decorator, in a module that ``runner.CHECK_MODULES`` lists::

    @check("my.thing", "the thing exists", classes=(TestClass.UTILIZATION.value,))
    def my_thing(ctx: PreflightContext) -> list[CheckResult]:
        ...

``classes`` are the test classes the check is a prerequisite of: a class DAG runs those checks first, and a
failed one stops the class before anything is submitted. A check with no classes runs only in
``gpupoc preflight`` (a finding rather than a prerequisite). A check raises nothing: ``SourceUnavailable`` and
any other error become a failed result naming the endpoint and the fix. The ``api`` check runs first; when
the API does not answer, the preflight stops there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from gpupoc.cluster.access import ALL_CLASSES
from gpupoc.preflight.model import CheckResult

if TYPE_CHECKING:
    from gpupoc.preflight.context import PreflightContext

CheckFn = Callable[["PreflightContext"], list[CheckResult]]


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    run: CheckFn
    classes: tuple[str, ...]

    def prerequisite_of(self, test_class: str) -> bool:
        return test_class in self.classes


CHECKS: list[Check] = []


def check(check_id: str, title: str, classes: tuple[str, ...] = ALL_CLASSES) -> Callable[[CheckFn], CheckFn]:
    """Register ``fn`` as the check ``check_id`` (ids are unique)."""
    def register(fn: CheckFn) -> CheckFn:
        if any(c.id == check_id for c in CHECKS):
            raise ValueError(f"preflight check {check_id!r} is registered twice")
        CHECKS.append(Check(check_id, title, fn, tuple(classes)))
        return fn
    return register
