"""The summary page's facts: one key figure per test class (and one of its online services where it judged
them) and the check coverage.

Coverage counts every check the suites hold for each test class and every reviewer-scored item: a class
without a validated run counts all its checks as not verified, so a partial POC never reads as a complete one.
"""

from __future__ import annotations

import pandas as pd

from gpupoc.evidence.reader import RunEvidence
from gpupoc.report import measures
from gpupoc.report.cells import number, quantity
from gpupoc.report.inputs import TEST_CLASSES
from gpupoc.report.items import ITEMS
from gpupoc.report.models import Coverage, CoverageEntry, ItemResult, KeyFigure
from gpupoc.report.wording import Wording
from gpupoc.validation.models import CheckOutcome, Tier, ValidationSummary, Verdict
from gpupoc.validation.suites import SuiteFile

KEY_FIGURES = {  # test class -> string-table key of its one figure
    "queue_congestion": "key.waits_explained",
    "tenant_isolation": "key.forbidden_denied",
    "utilization": "key.allocated_used",
    "fault_recovery": "key.chains_complete",
    "audit_trail": "key.audit_match",
}
COUNTED = {  # test class -> (table, the measure of it)
    "queue_congestion": ("explanations", measures.waits_explained),
    "tenant_isolation": ("access_probes", measures.forbidden_denied),
    "fault_recovery": ("failure_records", measures.chains_complete),
    "audit_trail": ("audit_matches", measures.audit_matched),
}
# test class -> (table, string-table key, its measure): a second key figure where the plan runs online services
# (its checks are on that table); its status is the status of those checks.
SERVICE_FIGURES = {
    "queue_congestion": ("service_slo", "key.services_slo_held", measures.slo_held),
    "fault_recovery": ("service_recovery", "key.serving_replaced", measures.replacements_ready),
}


def key_measure(test_class: str, ev: RunEvidence) -> measures.Measure | None:
    """The class's counted figure from its latest run (the same function the item's figures use)."""
    if test_class not in COUNTED:
        return None
    table, measure = COUNTED[test_class]
    m = measure(ev.load(table))
    return m if m is not None and m.total else None


def key_value(test_class: str, ev: RunEvidence, words: Wording | None = None) -> str | None:
    """The class's figure from its latest run, or None when its table holds nothing."""
    if test_class == "utilization":
        ut = ev.load("utilization")
        if ut.empty:
            return None
        alloc, used = float(ut["allocated_gpu_hours"].sum()), float(ut["used_gpu_hours"].sum())
        w = words or Wording("en")
        share = f"{w.t('space')}{w.t('lparen')}{100 * used / alloc:.0f}%{w.t('rparen')}" if alloc else ""
        return f"{number(alloc)} / {quantity(used, 'used_gpu_hours', w)}{share}"
    m = key_measure(test_class, ev)
    return m.share if m else None


def class_status(checks: list[CheckOutcome]) -> Verdict:
    """Fail when a check failed; not verified when a required check was not verified or none passed nor
    was not applicable; not applicable when none passed; else pass."""
    if any(c.verdict is Verdict.FAIL for c in checks):
        return Verdict.FAIL
    passed = any(c.verdict is Verdict.PASS for c in checks)
    inapplicable = any(c.verdict is Verdict.NOT_APPLICABLE for c in checks)
    if any(c.verdict is Verdict.NOT_VERIFIED and not c.optional for c in checks) or not (passed or inapplicable):
        return Verdict.NOT_VERIFIED
    return Verdict.PASS if passed else Verdict.NOT_APPLICABLE


def key_figures(runs: dict[str, RunEvidence], summaries: dict[str, ValidationSummary],
                words: Wording | None = None) -> list[KeyFigure]:
    """One key figure per test class; after it, where the class judged online services, their figure."""
    out = []
    for tc in TEST_CLASSES:
        ev, summary = runs.get(tc), summaries.get(tc)
        m = key_measure(tc, ev) if ev else None
        out.append(KeyFigure(test_class=tc, label=KEY_FIGURES[tc], value=key_value(tc, ev, words) if ev else None,
                             status=class_status(summary.checks) if summary else Verdict.NOT_VERIFIED,
                             check=m.check if m else None, count=m.count if m else None,
                             out_of=m.total if m else None))
        served = service_figure(tc, ev, summary, words or Wording("en"))
        out += [served] if served is not None else []
    return out


def service_figure(test_class: str, ev: RunEvidence | None, summary: ValidationSummary | None,
                   words: Wording) -> KeyFigure | None:
    """The online services' key figure of a class whose checks judged them (none when the plan runs no
    service): the services that met their SLO with the lowest availability, or the serving replicas replaced
    after a node failure with the longest replacement; its status that of the checks on the same table."""
    if test_class not in SERVICE_FIGURES or summary is None:
        return None
    table, label, measure = SERVICE_FIGURES[test_class]
    checks = [c for c in summary.checks if c.table == table]
    if not checks:
        return None
    df = ev.load(table) if ev is not None else None
    m = measure(df) if df is not None else None
    m = m if m is not None and m.total else None
    value = None
    if m is not None:
        column, key = ("availability_pct", "key.lowest_availability") if table == "service_slo" \
            else ("replacement_seconds", "key.longest")
        values = df[column].dropna() if column in df else pd.Series(dtype=float)
        worst = (values.min() if column == "availability_pct" else values.max()) if len(values) else float("nan")
        shown = number(float(worst), 1) if column == "availability_pct" else quantity(float(worst), column, words)
        value = m.share + (f"{words.t('space')}{words.t('lparen')}{words.t(key, value=shown)}{words.t('rparen')}"
                           if worst == worst else "")
    return KeyFigure(test_class=test_class, label=label, value=value, status=class_status(checks),
                     check=m.check if m else None, count=m.count if m else None, out_of=m.total if m else None)


def expected_checks(suites: list[SuiteFile], test_class: str) -> list[str]:
    """The check ids the suites hold for ``test_class`` (with their default parameters)."""
    ids = []
    for s in suites:
        if s.applies_to(test_class):
            ids += [(e.get("meta") or {}).get("check_id", "?") for e in s.expectations(s.parameters())]
    return ids


def coverage(summaries: dict[str, ValidationSummary], suites: list[SuiteFile],
             items: list[ItemResult] = ()) -> Coverage:
    """Checks passed, failed, not applicable and not verified over every test class (a class without a run
    counts every check of its suites as not verified), and the reviewer-scored items of ``items``; the not
    applicable and not verified named once per check and reason, with the classes they stand for."""
    cov = Coverage()
    named: dict[Verdict, dict[tuple[str, str], CoverageEntry]] = {Verdict.NOT_APPLICABLE: {}, Verdict.NOT_VERIFIED: {}}
    for tc in TEST_CLASSES:
        summary = summaries.get(tc)
        outcomes = ([(c.check_id, c.verdict, c.reason) for c in summary.checks] if summary is not None
                    else [(cid, Verdict.NOT_VERIFIED, "") for cid in expected_checks(suites, tc)])
        for cid, verdict, reason in sorted(outcomes, key=lambda o: o[0]):
            cov.data_checks += 1
            _count(cov, verdict)
            if verdict in named:
                entry = named[verdict].setdefault((cid, reason), CoverageEntry(check=cid, reason=reason))
                entry.test_classes.append(tc)
    for it in items:
        if ITEMS.get(it.id) is Tier.EXPERIENCE:  # judged by reviewers' scores, whatever its tier
            cov.scored_items += 1
            _count(cov, it.verdict)
            if it.verdict in named:
                named[it.verdict][(it.id, it.reason)] = CoverageEntry(check=it.id, reason=it.reason)
    cov.not_applicable_checks = list(named[Verdict.NOT_APPLICABLE].values())
    cov.not_verified_checks = list(named[Verdict.NOT_VERIFIED].values())
    return cov


def _count(cov: Coverage, verdict: Verdict) -> None:
    field = {Verdict.PASS: "passed", Verdict.FAIL: "failed", Verdict.NOT_APPLICABLE: "not_applicable",
             Verdict.NOT_VERIFIED: "not_verified"}[verdict]
    setattr(cov, field, getattr(cov, field) + 1)
