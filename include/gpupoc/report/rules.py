"""Decision rules: what a failing or unverified item of each tier decides; scope and findings."""

from __future__ import annotations

from typing import Callable

from gpupoc.evidence.sharing_tables import SHARING_TABLES
from gpupoc.plan.settings import DecisionRules
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
SHARED_GPUS = "shared_gpus"  # the scope line of the sharing checks (those on the sharing tables: ISO-11..13)

FINDING_TARGET = {
    FailureClass.PRODUCT_GAP: FindingTarget.CONTRACT,
    FailureClass.CONFIGURATION: FindingTarget.IMPLEMENTATION_PLAN,
    FailureClass.DATA_PREPARATION: FindingTarget.SECOND_VERIFICATION,
    FailureClass.SCENARIO_MISMATCH: FindingTarget.SECOND_VERIFICATION,
}


def decide(items: list[ItemResult], rules: DecisionRules,
           label: Callable[[str], str] = lambda key: key.split(".", 1)[-1]) -> tuple[Decision, list[str]]:
    """The most severe outcome any item triggers, with one reason line per triggering item.

    ``label`` turns string-table keys (``item.x``, ``tier.must``, ``verdict.fail``, ``decision.postpone``) into words.
    """
    decision, reasons = Decision.GO_LIVE, []
    for it in items:
        if it.verdict is Verdict.PASS:
            continue
        d = outcome_rule(it, rules)
        name = label(f"item.{it.id}") if not it.id.startswith("check:") else it.id
        line = label("summary.decides")
        if "{" not in line:  # a label without the string table: the English line
            line = "{item} ({tier}, {verdict}) → {decision}"
        sep = label("label_sep") if label("label_sep") != "label_sep" else ": "
        reasons.append(line.format(item=name, tier=label("tier." + it.tier.value),
                                   verdict=label("verdict." + it.verdict.value), decision=label("decision." + d.value))
                       + (f"{sep}{it.reason}" if it.reason else ""))
        if SEVERITY[d] > SEVERITY[decision]:
            decision = d
    if decision is Decision.GO_LIVE:
        reasons.append(label("all_passed"))
    return decision, reasons


def outcome_rule(item: ItemResult, rules: DecisionRules) -> Decision:
    """What a failing or not passed item decides under ``rules``. A not applicable item decides as a not
    verified one: a case that never arose proved nothing, so it can never stand in for a pass."""
    outcome = "fail" if item.verdict is Verdict.FAIL else "not_verified"
    return getattr(rules, f"{item.tier.value}_{outcome}")


def scope(items: list[ItemResult], scenarios: dict[str, list[str]] | None = None,
          reason: Callable[[ScopeStatus, list[str]], str] = lambda status, ids: ", ".join(ids)) -> list[ScenarioScope]:
    """Per scenario: go live when its items pass; blocked by a failing must item; else a second verification.
    Then the "shared GPUs" line of the sharing checks, where the runs judged any (``sharing_scope``).

    ``reason(status, item ids)`` words why a scenario is blocked or needs a second verification."""
    by_id = {i.id: i for i in items}
    out = []
    for name, deps in (scenarios or SCENARIOS).items():
        its = [by_id[d] for d in deps if d in by_id]
        blocking = [i.id for i in its if i.tier is Tier.MUST and i.verdict is Verdict.FAIL]
        open_ = [i.id for i in its if i.verdict is not Verdict.PASS and i.id not in blocking]
        if blocking:
            out.append(ScenarioScope(scenario=name, status=ScopeStatus.BLOCKED, items=deps,
                                     reason=reason(ScopeStatus.BLOCKED, blocking)))
        elif open_:
            out.append(ScenarioScope(scenario=name, status=ScopeStatus.SECOND_VERIFICATION, items=deps,
                                     reason=reason(ScopeStatus.SECOND_VERIFICATION, open_)))
        else:
            out.append(ScenarioScope(scenario=name, status=ScopeStatus.GO_LIVE, items=deps))
    shared = sharing_scope(items, reason)
    return out + ([shared] if shared else [])


def sharing_scope(items: list[ItemResult], reason: Callable[[ScopeStatus, list[str]], str] = lambda status, ids:
                  ", ".join(ids)) -> ScenarioScope | None:
    """The "shared GPUs" line, from the checks on the sharing tables (memory isolation, vGPU slices): blocked by
    one that fails in a must item, a second verification while one is not passed, else go live. None when no such
    check was judged or every one was not applicable (no node shares its GPUs: the scope has no such line)."""
    checks = [(it, c) for it in items for c in it.checks if c.table in SHARING_TABLES]
    ids = sorted({c.check_id for _, c in checks})
    if all(c.verdict is Verdict.NOT_APPLICABLE for _, c in checks):
        return None
    failed = sorted({c.check_id for it, c in checks if c.verdict is Verdict.FAIL and it.tier is Tier.MUST})
    open_ = sorted({c.check_id for _, c in checks if c.verdict not in (Verdict.PASS, Verdict.NOT_APPLICABLE)}
                   - set(failed))
    if failed:
        return ScenarioScope(scenario=SHARED_GPUS, status=ScopeStatus.BLOCKED, items=ids,
                             reason=reason(ScopeStatus.BLOCKED, failed))
    if open_:
        return ScenarioScope(scenario=SHARED_GPUS, status=ScopeStatus.SECOND_VERIFICATION, items=ids,
                             reason=reason(ScopeStatus.SECOND_VERIFICATION, open_))
    return ScenarioScope(scenario=SHARED_GPUS, status=ScopeStatus.GO_LIVE, items=ids)


def blocking(found: list[Finding], items: list[ItemResult], rules: DecisionRules) -> list[Finding]:
    """The findings whose item alone postpones go-live under ``rules``."""
    by_id = {i.id: i for i in items}
    out = []
    for f in found:
        if outcome_rule(by_id[f.item], rules) is Decision.POSTPONE:
            out.append(f)
    return out


def findings(items: list[ItemResult]) -> list[Finding]:
    """Product gaps go into the contract, configuration into the implementation plan, the rest to re-verify."""
    out = []
    for it in items:
        if it.verdict is Verdict.FAIL:
            fc = it.failure_class or FailureClass.PRODUCT_GAP
            out.append(Finding(item=it.id, target=FINDING_TARGET[fc], failure_class=fc, text=it.reason))
        elif it.verdict in (Verdict.NOT_VERIFIED, Verdict.NOT_APPLICABLE):  # provoke the case, or collect it
            out.append(Finding(item=it.id, target=FindingTarget.SECOND_VERIFICATION, text=it.reason))
    return out
