"""The report's plan against the thresholds each run was validated with.

A run is judged with the suite parameters stored with its evidence (``gpupoc.validation.parameters``), never
with the thresholds of the plan a report is built with. Where that plan sets a threshold of a class to another
value than its run stored, the report says so as a finding naming each value, beside the finding of a plan hash
that is not the evidence's (``report.subject.plan_findings``); nothing is applied silently.
"""

from __future__ import annotations

from typing import Any, Callable

from gpupoc.evidence.reader import RunEvidence
from gpupoc.report.models import Finding, FindingTarget

THRESHOLDS_ITEM = "thresholds"  # the item a finding about the plan's thresholds names (no banner: the plan
# hash, which covers the thresholds, already has one)


def differing(plan: dict[str, Any], stored: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(name, the plan's value, the run's) for each threshold both name with different values."""
    return [(k, plan[k], stored[k]) for k in sorted(plan) if k in stored and plan[k] != stored[k]]


def threshold_findings(runs: list[RunEvidence], thresholds: dict[str, dict[str, Any]],
                       say: Callable[..., str]) -> list[Finding]:
    """A finding per run whose stored thresholds are not those ``thresholds`` (the report's plan's, per test
    class) set. A run that stored none is judged without them (its checks say so), so it has no finding here.

    ``say(key, **values)`` words it (``finding.thresholds_differ``, ``phrase.threshold_differs``)."""
    out = []
    for ev in runs:
        stored, plan = ev.suite_parameters, thresholds.get(ev.test_class)
        if not stored or not plan:
            continue
        diff = differing(plan, stored)
        if diff:
            values = "; ".join(say("phrase.threshold_differs", name=k, plan=p, run=r) for k, p, r in diff)
            out.append(Finding(item=THRESHOLDS_ITEM, target=FindingTarget.SECOND_VERIFICATION,
                               text=say("finding.thresholds_differ", test_class=say(f"class.{ev.test_class}"),
                                        run=ev.rel_dir, values=values)))
    return out
