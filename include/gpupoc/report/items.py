"""The report items (tiers per the method) and each item's verdict from its checks or reviewer scores."""

from __future__ import annotations

from gpupoc.report.inputs import TEST_CLASSES
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
TEXTS = {  # English defaults; the report passes its string table ("reason.*" keys)
    "reason.no_run": "no validated run of test class {test_class}",
    "reason.no_check": "no check covers this item",
    "reason.no_scores": "no reviewer scored this item; add it to the scorecard or the report trigger form",
    "reason.not_applicable": "not applicable: {checks}",
    "reason.mean_pass": "mean score {mean:.1f} ({who})",
    "reason.mean_fail": "mean score {mean:.1f} below {pass_score:g} ({who})",
}


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
                         classes: list[str] | None = None, signals: dict[str, str] | None = None,
                         texts: dict[str, str] | None = None) -> ItemResult:
    tx = {**TEXTS, **(texts or {})}
    failing = [c for c in checks if c.verdict is Verdict.FAIL]
    unverified = [c for c in checks if c.verdict is Verdict.NOT_VERIFIED and not c.optional]
    inapplicable = [c for c in checks if c.verdict is Verdict.NOT_APPLICABLE]
    passed = any(c.verdict is Verdict.PASS for c in checks)
    classes = classes or []
    checks = sorted(checks, key=lambda c: (c.check_id, _class_order(c.test_class)))
    res = ItemResult(id=item, tier=tier, verdict=Verdict.PASS, checks=checks, test_classes=classes)
    if failing:
        order = {Tier.MUST: 0, Tier.KEY: 1, Tier.EXPERIENCE: 2}
        first = sorted(failing, key=lambda c: order[c.tier])[0]
        res.verdict = Verdict.FAIL
        res.failure_class = first.failure_class or FailureClass.PRODUCT_GAP
        res.reason = "; ".join(f"{c.check_id} ({(signals or {}).get(c.check_id, c.signal)}) {c.reason}"
                               for c in failing)
    elif missing or unverified or not (passed or inapplicable):  # a pass needs a check that passed
        res.verdict = Verdict.NOT_VERIFIED
        parts = [tx["reason.no_run"].format(test_class=m) for m in missing]
        parts += [_named(c) for c in _once(unverified or [c for c in checks if c.verdict is Verdict.NOT_VERIFIED])]
        res.reason = "; ".join(parts) or tx["reason.no_check"]
    elif inapplicable:  # cases that never arose prove nothing by themselves: not applicable unless a check passed
        res.verdict = Verdict.PASS if passed else Verdict.NOT_APPLICABLE
        res.reason = tx["reason.not_applicable"].format(checks="; ".join(_named(c) for c in _once(inapplicable)))
    return res


def _class_order(test_class: str) -> int:
    return TEST_CLASSES.index(test_class) if test_class in TEST_CLASSES else len(TEST_CLASSES)


def _named(check: CheckOutcome) -> str:
    return f"{check.check_id}: {check.reason}"


def _once(checks: list[CheckOutcome]) -> list[CheckOutcome]:
    """One check per id and reason (a check shared by several classes reads once when it reads the same)."""
    seen: dict[tuple[str, str], CheckOutcome] = {}
    for c in checks:
        seen.setdefault((c.check_id, c.reason), c)
    return list(seen.values())


def check_items(summaries: dict[str, ValidationSummary], suites: list[SuiteFile], rules: DecisionRules,
                signals: dict[str, str] | None = None, texts: dict[str, str] | None = None) -> list[ItemResult]:
    """Items judged by data checks: verdicts from the latest validated run of each test class.

    A check moved to another tier by ``rules.tier_overrides`` is reported as its own item ``check:<ID>``.
    ``signals`` (check id -> pass signal) words the reasons in the report's language.
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
        out.append(_verdict_from_checks(item, tier, by_item.get(item, []), missing, classes, signals, texts))
    for c in detached:
        out.append(_verdict_from_checks(f"check:{c.check_id}", c.tier, [c], [], None, signals, texts))
    return out


def experience_items(scores: list[ReviewerScore], rules: DecisionRules,
                     texts: dict[str, str] | None = None) -> list[ItemResult]:
    """Experience items judged by named reviewers: mean score >= ``rules.pass_score`` passes; none is not verified."""
    tx = {**TEXTS, **(texts or {})}
    out = []
    for item, default_tier in ITEMS.items():
        if default_tier is not Tier.EXPERIENCE:
            continue
        tier = rules.tier_overrides.get(item, default_tier)
        mine = [s for s in scores if s.item == item]
        res = ItemResult(id=item, tier=tier, verdict=Verdict.NOT_VERIFIED, scores=mine, reason=tx["reason.no_scores"])
        if mine:
            mean = sum(s.score for s in mine) / len(mine)
            who = ", ".join(f"{s.reviewer}={s.score}" for s in mine)
            if mean >= rules.pass_score:
                res.verdict, res.reason = Verdict.PASS, tx["reason.mean_pass"].format(mean=mean, who=who)
            else:
                res.verdict, res.failure_class = Verdict.FAIL, FailureClass.PRODUCT_GAP
                res.reason = tx["reason.mean_fail"].format(mean=mean, pass_score=rules.pass_score, who=who)
        out.append(res)
    return out
