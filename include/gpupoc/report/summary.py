"""The summary page's facts: one key figure per test class and the check coverage.

Coverage counts every check the suites hold for each test class: a class without a validated run counts
all its checks as not verified, so a partial POC never reads as a complete one.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from gpupoc.evidence.reader import RunEvidence
from gpupoc.report.inputs import TEST_CLASSES
from gpupoc.report.models import Coverage, KeyFigure
from gpupoc.validation.models import CheckOutcome, ValidationSummary, Verdict
from gpupoc.validation.suites import SuiteFile

KEY_FIGURES = {  # test class -> string-table key of its one figure
    "queue_congestion": "key.waits_explained",
    "tenant_isolation": "key.cross_tenant_denied",
    "utilization": "key.allocated_used",
    "fault_recovery": "key.chains_complete",
    "audit_trail": "key.audit_match",
}


def _true(s: pd.Series) -> pd.Series:
    return s.map(lambda v: v is True or v == True)  # noqa: E712 - null is neither


def _of(part: int, whole: int) -> str | None:
    return f"{part}/{whole}" if whole else None


def key_value(test_class: str, ev: RunEvidence) -> str | None:
    """The class's figure from its latest run, or None when its table holds nothing."""
    if test_class == "queue_congestion":
        ex = ev.load("explanations")
        need = ex[ex["explained"].notna()] if "explained" in ex else ex.iloc[0:0]
        return _of(int(_true(need["explained"]).sum()) if len(need) else 0, len(need))
    if test_class == "tenant_isolation":
        ap = ev.load("access_probes")
        if ap.empty or "allowed" not in ap:
            return None
        cross = ap[ap["actor_tenant"] != ap["target_namespace"]]
        return _of(int((cross["allowed"] == False).sum()), len(cross))  # noqa: E712
    if test_class == "utilization":
        ut = ev.load("utilization")
        if ut.empty:
            return None
        alloc, used = float(ut["allocated_gpu_hours"].sum()), float(ut["used_gpu_hours"].sum())
        share = f" ({100 * used / alloc:.0f}%)" if alloc else ""
        return f"{alloc:.1f} / {used:.1f} GPU-h{share}"
    if test_class == "fault_recovery":
        fr = ev.load("failure_records")
        if fr.empty:
            return None
        complete = (_true(fr["logs_readable"]) & fr["events"].notna() & fr["gpu_release_seconds"].notna()
                    & _true(fr["verified"]))
        return _of(int(complete.sum()), len(fr))
    if test_class == "audit_trail":
        am = ev.load("audit_matches")
        return None if am.empty else _of(int(_true(am["matched"]).sum()), len(am))
    return None


def class_status(checks: list[CheckOutcome]) -> Verdict:
    """Fail when a check failed; not verified when a required check was not verified or there is none."""
    if any(c.verdict is Verdict.FAIL for c in checks):
        return Verdict.FAIL
    if not checks or any(c.verdict is Verdict.NOT_VERIFIED and not c.optional for c in checks):
        return Verdict.NOT_VERIFIED
    return Verdict.PASS


def key_figures(runs: dict[str, RunEvidence], summaries: dict[str, ValidationSummary]) -> list[KeyFigure]:
    out = []
    for tc in TEST_CLASSES:
        ev, summary = runs.get(tc), summaries.get(tc)
        out.append(KeyFigure(test_class=tc, label=KEY_FIGURES[tc], value=key_value(tc, ev) if ev else None,
                             status=class_status(summary.checks) if summary else Verdict.NOT_VERIFIED))
    return out


def expected_checks(suites: list[SuiteFile], test_class: str) -> list[str]:
    """The check ids the suites hold for ``test_class`` (with their default parameters)."""
    ids = []
    for s in suites:
        if s.applies_to(test_class):
            ids += [(e.get("meta") or {}).get("check_id", "?") for e in s.expectations(s.parameters())]
    return ids


def coverage(summaries: dict[str, ValidationSummary], suites: list[SuiteFile]) -> Coverage:
    """Checks passed, failed and not verified over every test class; the not verified named (with their
    class when a check id is shared by several classes)."""
    expected = {tc: expected_checks(suites, tc) for tc in TEST_CLASSES}
    classes_of = Counter(cid for ids in expected.values() for cid in set(ids))
    shared = {cid for cid, n in classes_of.items() if n > 1}
    cov = Coverage()
    for tc in TEST_CLASSES:
        summary = summaries.get(tc)
        outcomes = ([(c.check_id, c.verdict) for c in summary.checks] if summary is not None
                    else [(cid, Verdict.NOT_VERIFIED) for cid in expected[tc]])
        for cid, verdict in sorted(outcomes):
            if verdict is Verdict.PASS:
                cov.passed += 1
            elif verdict is Verdict.FAIL:
                cov.failed += 1
            else:
                cov.not_verified += 1
                cov.not_verified_checks.append(f"{cid} ({tc})" if cid in shared else cid)
    return cov
