"""The report items (tiers per the method) and each item's verdict from its checks or reviewer scores."""

from __future__ import annotations

from gpupoc.report.models import ItemResult, ReviewerScore
from gpupoc.report.rules import DecisionRules
from gpupoc.validation.models import CheckOutcome, FailureClass, Tier, ValidationSummary, Verdict
from gpupoc.validation.suites import SuiteFile

ITEMS: dict[str, Tier] = {
    "permission_isolation": Tier.MUST,
    "task_records": Tier.MUST,
    "queue_explainability": Tier.MUST,
    "failure_evidence": Tier.MUST,
    "utilization_reports": Tier.KEY,
    "cost_attribution": Tier.KEY,
    "scheduling_policy": Tier.KEY,
    "monitoring_integration": Tier.KEY,
    "ui_usability": Tier.EXPERIENCE,
    "documentation": Tier.EXPERIENCE,
    "training_cost": Tier.EXPERIENCE,
}
TEST_CLASSES = ["queue_congestion", "tenant_isolation", "utilization", "fault_recovery", "audit_trail"]


def required_classes(suites: list[SuiteFile]) -> dict[str, list[str]]:
    """Item -> the test classes whose suites hold checks for it (each must have a validated run)."""
    out: dict[str, set[str]] = {}
    for s in suites:
        classes = TEST_CLASSES if "*" in s.test_classes else s.test_classes
        for exp in s.data.get("expectations", []):
            item = (exp.get("meta") or {}).get("item")
            if item:
                out.setdefault(item, set()).update(classes)
    return {k: sorted(v, key=TEST_CLASSES.index) for k, v in out.items()}


def _verdict_from_checks(item: str, tier: Tier, checks: list[CheckOutcome], missing: list[str],
                         classes: list[str] | None = None) -> ItemResult:
    failing = [c for c in checks if c.verdict is Verdict.FAIL]
    unverified = [c for c in checks if c.verdict is Verdict.NOT_VERIFIED and not c.optional]
    classes = classes or []
    checks = sorted(checks, key=lambda c: c.check_id)
    res = ItemResult(id=item, tier=tier, verdict=Verdict.PASS, checks=checks, test_classes=classes)
    if failing:
        order = {Tier.MUST: 0, Tier.KEY: 1, Tier.EXPERIENCE: 2}
        first = sorted(failing, key=lambda c: order[c.tier])[0]
        res.verdict = Verdict.FAIL
        res.failure_class = first.failure_class or FailureClass.PRODUCT_GAP
        res.reason = "; ".join(f"{c.check_id}: {c.reason}" for c in failing)
    elif missing or unverified or not checks:
        res.verdict = Verdict.NOT_VERIFIED
        parts = [f"no validated run of test class {m}" for m in missing]
        parts += [f"{c.check_id}: {c.reason}" for c in unverified]
        res.reason = "; ".join(parts) or "no check covers this item"
    return res


def check_items(summaries: dict[str, ValidationSummary], suites: list[SuiteFile],
                rules: DecisionRules) -> list[ItemResult]:
    """Items judged by data checks: verdicts from the latest validated run of each test class.

    A check moved to another tier by ``rules.tier_overrides`` is reported as its own item ``check:<ID>``.
    """
    needed = required_classes(suites)
    by_item: dict[str, list[CheckOutcome]] = {}
    item_classes: dict[str, set[str]] = {}
    detached: list[CheckOutcome] = []
    for tc, summary in summaries.items():
        for c in summary.checks:
            item_classes.setdefault(c.item, set()).add(tc)
            base = rules.tier_overrides.get(c.item, ITEMS.get(c.item, c.tier))
            tier = rules.tier_overrides.get(c.check_id, base)
            if tier is not base:
                detached.append(c.model_copy(update={"tier": tier}))
            else:
                by_item.setdefault(c.item, []).append(c)
    out = []
    for item, default_tier in ITEMS.items():
        if default_tier is Tier.EXPERIENCE:
            continue
        tier = rules.tier_overrides.get(item, default_tier)
        missing = [tc for tc in needed.get(item, []) if tc not in summaries]
        classes = sorted(item_classes.get(item, set()), key=TEST_CLASSES.index)
        out.append(_verdict_from_checks(item, tier, by_item.get(item, []), missing, classes))
    for c in detached:
        out.append(_verdict_from_checks(f"check:{c.check_id}", c.tier, [c], []))
    return out


def experience_items(scores: list[ReviewerScore], rules: DecisionRules) -> list[ItemResult]:
    """Experience items judged by named reviewers: mean score >= ``rules.pass_score`` passes; none is not verified."""
    out = []
    for item, default_tier in ITEMS.items():
        if default_tier is not Tier.EXPERIENCE:
            continue
        tier = rules.tier_overrides.get(item, default_tier)
        mine = [s for s in scores if s.item == item]
        res = ItemResult(id=item, tier=tier, verdict=Verdict.NOT_VERIFIED, scores=mine,
                         reason="no reviewer scored this item; add it to the scorecard or the report trigger form")
        if mine:
            mean = sum(s.score for s in mine) / len(mine)
            who = ", ".join(f"{s.reviewer}={s.score}" for s in mine)
            if mean >= rules.pass_score:
                res.verdict, res.reason = Verdict.PASS, f"mean score {mean:.1f} ({who})"
            else:
                res.verdict, res.failure_class = Verdict.FAIL, FailureClass.PRODUCT_GAP
                res.reason = f"mean score {mean:.1f} below {rules.pass_score:g} ({who})"
        out.append(res)
    return out
