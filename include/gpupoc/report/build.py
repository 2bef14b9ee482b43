"""Compile the report from validated evidence: the latest run of each test class plus the whole window.

The report takes validated runs as its input; validation runs before it (each class DAG's validate task, or
``gpupoc.report.publish`` for runs that have none). Building only reads: each run's stored summary is checked
against the run's manifest and against the tables it validated (``gpupoc.validation.stored``), and a run
that cannot be trusted feeds only NOT VERIFIED checks, naming the file. Every sentence is in the report's
language (``gpupoc.report.wording``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gpupoc.evidence.reader import Problem, ProblemKind, RunEvidence, find_runs
from gpupoc.report import figures, replay_figures, rules as rules_mod
from gpupoc.report.inputs import INPUTS, TEST_CLASSES, Selection, ordered, plan_settings, select, write_inputs  # noqa: F401
from gpupoc.report.items import check_items, experience_items
from gpupoc.report.junit import write_junit
from gpupoc.report.models import EvidenceRef, ItemResult, Report, SignOff, SourceRun
from gpupoc.report.render import write_outputs
from gpupoc.report.scorecard import parse_scorecard, read_scorecard
from gpupoc.report.signin import verify_signoffs
from gpupoc.report.signoff import (apply_signoffs, blocks, check_signoffs, evidence_basis, parse_signoffs,
                                   with_basis)
from gpupoc.report.summary import coverage, key_figures
from gpupoc.report.window import stability
from gpupoc.report.wording import Wording
from gpupoc.validation.models import ValidationSummary
from gpupoc.validation.runner import data_docs_index, unvalidated_summary
from gpupoc.validation.stored import distrusted, load_summary, read_summary, run_problems
from gpupoc.validation.suites import SuiteFile, load_suites


@dataclass
class BuildResult:
    report: Report
    out_dir: Path
    paths: dict[str, Path]


def judged_summaries(runs: dict[str, RunEvidence], suites: list[SuiteFile]
                     ) -> tuple[dict[str, ValidationSummary], dict[str, list[Problem]]]:
    """Per test class, the summary the report may use, and why its run is not trusted (if it is not): a run
    that was never validated, or whose evidence or results changed since, feeds NOT VERIFIED checks only."""
    summaries, problems = {}, {}
    for tc, ev in runs.items():
        summary, unreadable = read_summary(ev)
        if summary is None:
            problem = unreadable or Problem(ProblemKind.NOT_VALIDATED, "validation/summary.json")
            code = problem.code if unreadable else "integrity.not_validated_yet"
            summaries[tc], problems[tc] = unvalidated_summary(ev, suites, code, problem.args), [problem]
            continue
        found = run_problems(ev, summary)
        summaries[tc], problems[tc] = (distrusted(summary, found) if found else summary), found
    return summaries, problems


def _rel(target: Path, out_dir: Path) -> str:
    return os.path.relpath(target, out_dir)


def _evidence_refs(item: ItemResult, summaries: dict[str, ValidationSummary], runs: dict[str, RunEvidence],
                   root: Path, out_dir: Path) -> list[EvidenceRef]:
    refs, seen = [], set()
    suites_used = {c.suite for c in item.checks}
    for tc, summary in summaries.items():
        ev = runs[tc]
        for so in summary.suites:
            if so.suite not in suites_used or not so.result_path:
                continue
            links = [(f"{so.suite}.json", root / so.result_path, "validation", None)]
            if not so.table.startswith("derived."):
                st = ev.status(so.table)
                links.append((f"{tc}/{so.table}.parquet", st.path, "table", st.sha256))
            for label, p, kind, sha in links:
                if str(p) not in seen:
                    seen.add(str(p))
                    refs.append(EvidenceRef(label=label, href=_rel(p, out_dir), kind=kind, sha256=sha or None))
    return refs


def _card(scorecard: Any, sel: Selection) -> dict[str, Any]:
    card = scorecard if scorecard is not None else sel.scorecard
    if isinstance(card, (str, os.PathLike)):
        return read_scorecard(card)
    return dict(card or {})


def build_report(path: str | Path | Selection, out_dir: str | Path | None = None, plan: Any = None,
                 scorecard: Any = None, suites_dir: str | Path | None = None, language: str | None = None,
                 now: datetime | None = None, earlier_signoffs: list[SignOff] | None = None) -> BuildResult:
    """Judge every item from the stored validations, decide, and write HTML (with its summary page),
    summary.html, Markdown, JSON and JUnit.

    ``scorecard``: a YAML/JSON path, or a dict as the report DAG's Params give it (scores and ``signoffs``);
    ``earlier_signoffs``: sign-offs recorded by earlier report runs (counted only on the same evidence).
    """
    sel = path if isinstance(path, Selection) else select(Path(path))
    out = Path(out_dir) if out_dir else sel.default_out
    out.mkdir(parents=True, exist_ok=True)
    settings = plan_settings(plan)
    words = Wording(language or settings.language)
    suites = load_suites(suites_dir)
    runs = sel.runs

    summaries, problems = judged_summaries(runs, suites)
    for summary in summaries.values():
        for c in summary.checks:
            c.reason = words.check_reason(c)
    card = _card(scorecard, sel)
    scores = parse_scorecard({k: card[k] for k in ("reviewers", "scores") if k in card}, "scorecard")
    items = (check_items(summaries, suites, settings.rules, words.signals, words.table)
             + experience_items(scores, settings.rules, words.table))
    docs = data_docs_index(sel.evidence_root)
    for it in items:
        if not it.id.startswith("check:"):
            it.figures, it.tables = figures.item_details(it.id, runs)
        it.evidence = _evidence_refs(it, summaries, runs, sel.evidence_root, out)
        if it.checks and docs.is_file():
            it.evidence.append(EvidenceRef(label="Data Docs", kind="data_docs", href=_rel(docs, out)))

    basis = evidence_basis(runs.values())
    given = parse_signoffs(card.get("signoffs"), "signoffs")
    check_signoffs(given, items, settings.reviewers)
    every = with_basis(given, basis) + list(earlier_signoffs or [])
    counted, claims = verify_signoffs([s for s in every if s.basis == basis], settings.reviewers, words)
    apply_signoffs(items, counted, words)

    decision, reasons = rules_mod.decide(items, settings.rules, words.t)
    found = rules_mod.findings(items)
    all_runs = find_runs(sel.evidence_root)
    stored = {str(ev.run_dir): load_summary(ev) for ev in all_runs}
    stored.update({str(runs[tc].run_dir): s for tc, s in summaries.items()})
    stab = stability([ev for ev in all_runs if ev.test_class in TEST_CLASSES], stored)
    charts = figures.build_charts(runs, words)
    charts.update(figures.stability_charts(stab, words.table))
    notes = [words.t("note.not_validated")] + [words.t("note.skipped_run", path=_rel(p, out)) for p, _ in sel.skipped]
    if "utilization" in runs:
        notes.insert(0, words.t("note.aggregated"))
    notes += replay_figures.replay_notes(runs, words)
    report = Report(
        title=words.t("title"), language=words.language,
        generated_at=(now or datetime.now(timezone.utc)).isoformat(), evidence_root=_rel(sel.evidence_root, out),
        basis=basis,
        sources=[SourceRun(test_class=tc, dag_id=ev.dag_id, run_id=ev.run_id, run_dir=ev.rel_dir, window=ev.window,
                           platform=dict(ev.manifest.get("platform") or {}), plan_hash=ev.plan_hash or None,
                           problems=[words.reason(p.code, p.args) for p in problems.get(tc, [])])
                 for tc, ev in ordered(runs)],
        decision=decision, decision_reasons=reasons, items=items,
        scope=rules_mod.scope(items, reason=lambda st, ids: words.t(f"scope_reason.{st.value}", items=words.items(ids))),
        findings=found, blocking=rules_mod.blocking(found, items, settings.rules),
        coverage=coverage(summaries, suites), key_figures=key_figures(runs, summaries),
        signoff=blocks(items, decision.value, counted, [s for s in every if s.basis != basis], settings.reviewers,
                       claims),
        failure_records=figures.failure_records_table(runs), stability=stab,
        data_docs=_rel(docs, out) if docs.is_file() else None, notes=notes, charts=charts)
    paths = write_outputs(report, out)
    paths["junit"] = write_junit(report, out)
    (out / "scorecard.json").write_text(json.dumps([s.model_dump() for s in scores], indent=1, ensure_ascii=False),
                                        encoding="utf-8")
    kept = {"scores": [s.model_dump() for s in scores], "signoffs": [s.model_dump(mode="json") for s in every]}
    paths["inputs"] = write_inputs(out, sel, kept, words.language, settings.plan or sel.plan)
    return BuildResult(report, out, paths)
