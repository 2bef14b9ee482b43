"""Decision rules: what a failing or unverified item of each tier decides; scope and findings."""

from __future__ import annotations

from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field

from gpupoc.report.models import (Decision, Finding, FindingTarget, ItemResult, ScenarioScope, ScopeStatus)
from gpupoc.validation.models import FailureClass, Tier, Verdict

SEVERITY = {Decision.GO_LIVE: 0, Decision.LATER_OPTIMIZATION: 1, Decision.LIMITED_GO_LIVE: 2, Decision.POSTPONE: 3}

# Scenario -> items it depends on (defaults; the plan's report settings may not change them yet).
SCENARIOS: dict[str, list[str]] = {
    "training": ["task_records", "queue_explainability", "scheduling_policy", "permission_isolation"],
    "inference": ["task_records", "utilization_reports", "monitoring_integration", "permission_isolation"],
    "failure_handling": ["failure_evidence", "monitoring_integration"],
    "cross_team": ["permission_isolation", "cost_attribution", "scheduling_policy"],
}

FINDING_TARGET = {
    FailureClass.PRODUCT_GAP: FindingTarget.CONTRACT,
    FailureClass.CONFIGURATION: FindingTarget.IMPLEMENTATION_PLAN,
    FailureClass.DATA_PREPARATION: FindingTarget.SECOND_VERIFICATION,
    FailureClass.SCENARIO_MISMATCH: FindingTarget.SECOND_VERIFICATION,
}


class DecisionRules(BaseModel):
    """Defaults follow the method: a must item failing or not verified blocks go-live."""

    model_config = ConfigDict(extra="ignore")

    must_fail: Decision = Decision.POSTPONE
    must_not_verified: Decision = Decision.POSTPONE
    key_fail: Decision = Decision.LIMITED_GO_LIVE
    key_not_verified: Decision = Decision.LIMITED_GO_LIVE
    experience_fail: Decision = Decision.LATER_OPTIMIZATION
    experience_not_verified: Decision = Decision.LATER_OPTIMIZATION
    tier_overrides: dict[str, Tier] = Field(default_factory=dict, description="item id or check id -> tier")
    pass_score: float = Field(default=3.0, ge=1, le=5, description="mean reviewer score an experience item needs")

    @classmethod
    def from_any(cls, value: Any) -> "DecisionRules":
        """From a plan's ``report.decision_rules`` (model or dict) or None."""
        if value is None:
            return cls()
        if hasattr(value, "model_dump"):
            value = value.model_dump(mode="json")
        return cls.model_validate(value)


def decide(items: list[ItemResult], rules: DecisionRules,
           label: Callable[[str], str] = lambda key: key.split(".", 1)[-1]) -> tuple[Decision, list[str]]:
    """The most severe outcome any item triggers, with one reason line per triggering item.

    ``label`` turns string-table keys (``item.x``, ``tier.must``, ``verdict.fail``, ``decision.postpone``) into words.
    """
    decision, reasons = Decision.GO_LIVE, []
    for it in items:
        if it.verdict is Verdict.PASS:
            continue
        outcome = "fail" if it.verdict is Verdict.FAIL else "not_verified"
        d = getattr(rules, f"{it.tier.value}_{outcome}")
        name = label(f"item.{it.id}") if not it.id.startswith("check:") else it.id
        reasons.append(f"{name} ({label('tier.' + it.tier.value)}, {label('verdict.' + outcome)}) → "
                       f"{label('decision.' + d.value)}" + (f": {it.reason}" if it.reason else ""))
        if SEVERITY[d] > SEVERITY[decision]:
            decision = d
    if decision is Decision.GO_LIVE:
        reasons.append(label("all_passed"))
    return decision, reasons


def scope(items: list[ItemResult], scenarios: dict[str, list[str]] | None = None) -> list[ScenarioScope]:
    """Per scenario: go live when its items pass; blocked by a failing must item; else a second verification."""
    by_id = {i.id: i for i in items}
    out = []
    for name, deps in (scenarios or SCENARIOS).items():
        its = [by_id[d] for d in deps if d in by_id]
        blocking = [i.id for i in its if i.tier is Tier.MUST and i.verdict is Verdict.FAIL]
        open_ = [i.id for i in its if i.verdict is not Verdict.PASS and i.id not in blocking]
        if blocking:
            out.append(ScenarioScope(scenario=name, status=ScopeStatus.BLOCKED, items=deps,
                                     reason="failed: " + ", ".join(blocking)))
        elif open_:
            out.append(ScenarioScope(scenario=name, status=ScopeStatus.SECOND_VERIFICATION, items=deps,
                                     reason="not passed: " + ", ".join(open_)))
        else:
            out.append(ScenarioScope(scenario=name, status=ScopeStatus.GO_LIVE, items=deps))
    return out


def findings(items: list[ItemResult]) -> list[Finding]:
    """Product gaps go into the contract, configuration into the implementation plan, the rest to re-verify."""
    out = []
    for it in items:
        if it.verdict is Verdict.FAIL:
            fc = it.failure_class or FailureClass.PRODUCT_GAP
            out.append(Finding(item=it.id, target=FINDING_TARGET[fc], failure_class=fc, text=it.reason))
        elif it.verdict is Verdict.NOT_VERIFIED:
            out.append(Finding(item=it.id, target=FindingTarget.SECOND_VERIFICATION, text=it.reason))
    return out
