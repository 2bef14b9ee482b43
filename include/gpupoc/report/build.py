"""Compile the report from stored evidence: the latest run of each test class plus the whole window."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gpupoc.exceptions import GpupocError
from gpupoc.report import figures, rules as rules_mod
from gpupoc.report.items import TEST_CLASSES, check_items, experience_items
from gpupoc.report.junit import write_junit
from gpupoc.report.models import EvidenceRef, ItemResult, Report, SourceRun
from gpupoc.report.render import check_signals, strings, write_outputs
from gpupoc.report.scorecard import load_scorecard, parse_scorecard
from gpupoc.report.window import load_summary, stability
from gpupoc.validation.evidence import MANIFEST, RunEvidence, find_runs
from gpupoc.validation.models import ValidationSummary
from gpupoc.validation.runner import data_docs_index, validate_run
from gpupoc.validation.suites import load_suites

INPUTS = "report-inputs.json"


@dataclass
class BuildResult:
    report: Report
    out_dir: Path
    paths: dict[str, Path]


@dataclass
class _Selection:
    evidence_root: Path
    latest: dict[str, RunEvidence]
    default_out: Path
    scorecard: Any = None


def _select(path: Path) -> _Selection:
    """A run dir (its run replaces the latest of its class), a report dir with inputs, or an evidence root."""
    if (path / INPUTS).is_file():
        data = json.loads((path / INPUTS).read_text(encoding="utf-8"))
        runs = {}
        for rd in data.get("runs", []):
            ev = RunEvidence.open(rd)
            runs[ev.test_class] = ev
        return _Selection(Path(data["evidence_root"]), runs, path, data.get("scorecard"))
    if (path / MANIFEST).is_file():
        ev = RunEvidence.open(path)
        sel = _select_root(ev.evidence_root, path / "report")
        sel.latest[ev.test_class] = ev
        return sel
    if path.is_dir():
        return _select_root(path, path / "report")
    raise GpupocError(f"{path}: not a directory; pass an evidence root, a run directory or a report directory")


def _select_root(root: Path, out: Path) -> _Selection:
    latest = {}
    for ev in find_runs(root):  # oldest first: the last one of each class wins
        if ev.test_class in TEST_CLASSES:
            latest[ev.test_class] = ev
    return _Selection(root, latest, out)


def _plan_settings(plan: Any) -> tuple[str, rules_mod.DecisionRules, dict[str, dict[str, Any]]]:
    """(language, decision rules, thresholds per test class) from a plan path, Plan object or None."""
    if plan is None:
        return "en", rules_mod.DecisionRules(), {}
    if isinstance(plan, (str, os.PathLike)):
        from gpupoc.plan import load_plan

        plan = load_plan(plan)
    thresholds = {}
    for tc in TEST_CLASSES:
        spec = getattr(plan.test_classes, tc, None)
        th = getattr(spec, "thresholds", None)
        if th is not None:
            thresholds[tc] = th.model_dump(mode="json")
    return plan.report.language, rules_mod.DecisionRules.from_any(plan.report.decision_rules), thresholds


def _rel(target: Path, out_dir: Path) -> str:
    return os.path.relpath(target, out_dir)


def _evidence_refs(item: ItemResult, summaries: dict[str, ValidationSummary], latest: dict[str, RunEvidence],
                   out_dir: Path) -> list[EvidenceRef]:
    refs, seen = [], set()
    suites_used = {c.suite for c in item.checks}
    for tc, summary in summaries.items():
        ev = latest[tc]
        for so in summary.suites:
            if so.suite not in suites_used:
                continue
            for label, p, kind, sha in [(f"{so.suite}.json", Path(so.result_path), "validation", None)] + (
                    [] if so.table.startswith("derived.") else
                    [(f"{tc}/{so.table}.parquet", ev.status(so.table).path, "table", ev.status(so.table).sha256)]):
                if str(p) not in seen:
                    seen.add(str(p))
                    refs.append(EvidenceRef(label=label, href=_rel(p, out_dir), kind=kind, sha256=sha or None))
    return refs


def build_report(path: str | Path, out_dir: str | Path | None = None, plan: Any = None, scorecard: Any = None,
                 suites_dir: str | Path | None = None, revalidate: bool = False, language: str | None = None,
                 now: datetime | None = None) -> BuildResult:
    """Validate what is not validated yet, judge every item, decide, and write HTML, Markdown and JSON.

    ``scorecard``: a YAML/JSON path, or a dict as the report DAG's Params give it; kept with the report.
    """
    sel = _select(Path(path))
    out = Path(out_dir) if out_dir else sel.default_out
    out.mkdir(parents=True, exist_ok=True)
    lang, rules, thresholds = _plan_settings(plan)
    lang = language or lang
    table = strings(lang)
    suites = load_suites(suites_dir)

    summaries: dict[str, ValidationSummary] = {}
    for tc, ev in sel.latest.items():
        s = None if revalidate else load_summary(ev)
        summaries[tc] = s or validate_run(ev.run_dir, suites_dir, sel.evidence_root, thresholds.get(tc))

    card = scorecard if scorecard is not None else sel.scorecard
    scores = load_scorecard(card) if isinstance(card, (str, os.PathLike)) else parse_scorecard(card)
    items = (check_items(summaries, suites, rules, check_signals(lang), table)
             + experience_items(scores, rules, table))
    for it in items:
        if not it.id.startswith("check:"):
            it.figures, it.tables = figures.item_details(it.id, sel.latest)
        it.evidence = _evidence_refs(it, summaries, sel.latest, out)
        if it.checks and data_docs_index(sel.evidence_root).is_file():
            it.evidence.append(EvidenceRef(label="Data Docs", kind="data_docs",
                                           href=_rel(data_docs_index(sel.evidence_root), out)))
    decision, reasons = rules_mod.decide(items, rules, lambda k: table.get(k, k.split('.', 1)[-1]))

    all_runs = find_runs(sel.evidence_root)
    stored = {str(ev.run_dir): load_summary(ev) for ev in all_runs}
    stored.update({str(sel.latest[tc].run_dir): s for tc, s in summaries.items()})
    stab = stability([ev for ev in all_runs if ev.test_class in TEST_CLASSES], stored)

    charts = figures.build_charts(sel.latest, {k[len("chart."):]: v for k, v in table.items()
                                               if k.startswith("chart.")})
    charts.update(figures.stability_charts(stab, table))
    docs = data_docs_index(sel.evidence_root)
    notes = [table["note.not_validated"]]
    if "utilization" in sel.latest:
        notes.insert(0, table["note.aggregated"])
    report = Report(
        title=table["title"], language=lang, generated_at=(now or datetime.now(timezone.utc)).isoformat(),
        evidence_root=str(sel.evidence_root),
        sources=[SourceRun(test_class=tc, dag_id=ev.dag_id, run_id=ev.run_id, run_dir=str(ev.run_dir),
                           window=ev.window, platform=dict(ev.manifest.get("platform") or {}),
                           plan_hash=ev.manifest.get("plan_hash"))
                 for tc, ev in sorted(sel.latest.items(), key=lambda kv: TEST_CLASSES.index(kv[0]))],
        decision=decision, decision_reasons=reasons, items=items, scope=rules_mod.scope(items),
        findings=rules_mod.findings(items), failure_records=figures.failure_records_table(sel.latest),
        stability=stab, data_docs=_rel(docs, out) if docs.is_file() else None, notes=notes, charts=charts)
    paths = write_outputs(report, out)
    paths["junit"] = write_junit(report, out)
    (out / "scorecard.json").write_text(json.dumps([s.model_dump() for s in scores], indent=1, ensure_ascii=False),
                                        encoding="utf-8")
    (out / INPUTS).write_text(json.dumps({
        "evidence_root": str(sel.evidence_root), "runs": [str(ev.run_dir) for ev in sel.latest.values()],
        "scorecard": {"scores": [s.model_dump() for s in scores]}, "language": lang}, indent=1,
        ensure_ascii=False), encoding="utf-8")
    return BuildResult(report, out, paths)
