"""Across the POC window: each run's outcome and which findings persist, come and go, or are resolved."""

from __future__ import annotations

import json

import pandas as pd

from gpupoc.report.measures import items_succeeded
from gpupoc.report.models import RunStat, Stability
from gpupoc.evidence.reader import RunEvidence
from gpupoc.validation.models import ValidationSummary, Verdict


def load_summary(ev: RunEvidence) -> ValidationSummary | None:
    """The stored validation summary of a run, or None when it was never validated."""
    p = ev.run_dir / "validation" / "summary.json"
    if not p.is_file():
        return None
    try:
        return ValidationSummary.model_validate(json.loads(p.read_text(encoding="utf-8")))
    except (ValueError, json.JSONDecodeError):
        return None


def run_stat(ev: RunEvidence, summary: ValidationSummary | None) -> RunStat:
    st = RunStat(dag_id=ev.dag_id, run_id=ev.run_id, test_class=ev.test_class,
                 window_end=str(ev.window.get("end")) if ev.window.get("end") else None, validated=summary is not None)
    if summary is not None:
        checks = summary.checks
        st.checks_passed = sum(c.verdict is Verdict.PASS for c in checks)
        st.checks_failed = sum(c.verdict is Verdict.FAIL for c in checks)
        st.checks_not_verified = sum(c.verdict is Verdict.NOT_VERIFIED for c in checks)
        st.checks_not_applicable = sum(c.verdict is Verdict.NOT_APPLICABLE for c in checks)
        st.failed_checks = summary.failed_checks
    status = ev.status("workload_runs")
    if status.present:
        wr = ev.load("workload_runs", columns=None)
        st.workloads = len(wr)
        done = items_succeeded(wr)
        if done is not None and done.total:  # by wave item: a preempted attempt resubmitted counts by its resubmission
            st.success_rate = round(done.count / done.total, 4)
        if len(wr) and "wait_seconds" in wr:
            w = pd.to_numeric(wr["wait_seconds"], errors="coerce").dropna()
            if len(w):
                st.wait_p50_seconds = round(float(w.median()), 2)
                st.wait_p95_seconds = round(float(w.quantile(0.95)), 2)
    return st


def stability(runs: list[RunEvidence], summaries: dict[str, ValidationSummary | None]) -> Stability:
    """``runs`` oldest first; ``summaries`` by run dir."""
    stats = [run_stat(ev, summaries.get(str(ev.run_dir))) for ev in runs]
    out = Stability(runs=stats)
    by_class: dict[str, list[RunStat]] = {}
    for s in stats:
        if s.validated:
            by_class.setdefault(s.test_class, []).append(s)
    for cls_runs in by_class.values():
        failed_sets = [set(s.failed_checks) for s in cls_runs]
        every = set().union(*failed_sets)
        for cid in sorted(every):
            seq = [cid in fs for fs in failed_sets]
            flips = sum(a != b for a, b in zip(seq, seq[1:]))
            if all(seq):
                out.persistent.append(cid)
            elif seq[-1] and sum(seq) == 1:
                out.new.append(cid)
            elif not seq[-1] and flips <= 1:
                out.resolved.append(cid)
            else:
                out.intermittent.append(cid)
    return out
