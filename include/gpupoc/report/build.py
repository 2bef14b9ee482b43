"""Compile the report from validated evidence: the latest run of each test class plus the whole window.

The report takes validated runs as its input; validation runs before it (each class DAG's validate task, or
``gpupoc.report.publish`` for runs that have none). Building only reads: each run's stored summary is checked
against the run's manifest and against the tables it validated (``gpupoc.validation.stored``), and a run
that cannot be trusted feeds only NOT VERIFIED checks, naming the file. A plan whose thresholds differ from
those a run stored is a finding, never applied. Every sentence is in the report's language
(``gpupoc.report.wording``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gpupoc.evidence.reader import Problem, ProblemKind, RunEvidence, find_runs
from gpupoc.report import cost_charts, figures, pictures, replay_figures, rules as rules_mod, service_charts
from gpupoc.report.evidence_pages import write_pages
from gpupoc.report.inputs import INPUTS, TEST_CLASSES, Selection, ordered, plan_settings, select, write_inputs  # noqa: F401
from gpupoc.report.items import check_items, experience_items
from gpupoc.report.junit import write_junit
from gpupoc.report.models import EvidenceRef, EvidenceTable, ItemResult, Report, SignOff, SourceRun
from gpupoc.report.render import render_table_page, write_outputs
from gpupoc.report.scorecard import parse_scorecard, read_scorecard
from gpupoc.report.signin import verify_signoffs
from gpupoc.report.signoff import (apply_signoffs, blocks, check_signoffs, evidence_basis, parse_signoffs,
                                   with_basis)
from gpupoc.report.subject import (judged, memory_isolation_findings, plan_findings,
                                   sharing_findings)
from gpupoc.report.summary import coverage, key_figures
from gpupoc.report.thresholds import threshold_findings
from gpupoc.report.window import stability
from gpupoc.report.wording import Wording
from gpupoc.validation.models import ValidationSummary, Verdict
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
                   root: Path, out_dir: Path, pages: dict[str, list[EvidenceRef]]) -> list[EvidenceRef]:
    """The item's evidence: each table its checks read (as HTML, CSV and parquet) and each GX result."""
    refs, seen = [], set()
    suites_used = {c.suite for c in item.checks}
    for tc, summary in summaries.items():
        for so in summary.suites:
            if so.suite not in suites_used or not so.result_path:
                continue
            links = pages.get(f"{tc}/{so.table}", []) if not so.table.startswith("derived.") else []
            links = [r.model_copy(update={"label": f"{tc}/{so.table}"}) if r.kind == "table_html" else r for r in links]
            links.append(EvidenceRef(label=f"{so.suite}.json", href=_rel(root / so.result_path, out_dir),
                                     kind="validation"))
            for ref in links:
                if ref.href not in seen:
                    seen.add(ref.href)
                    refs.append(ref)
    return refs


def _details(items: list[ItemResult], runs: dict[str, RunEvidence], summaries: dict[str, ValidationSummary],
             sel: Selection, out: Path, pages: dict[str, list[EvidenceRef]]) -> None:
    """Each item's figures, tables (linked to their whole source table) and evidence links."""
    docs = data_docs_index(sel.evidence_root)
    for it in items:
        if not it.id.startswith("check:"):
            it.figures, it.tables = figures.item_details(it.id, runs)
        for tb in it.tables:
            tb.links = pages.get(tb.source, [])
        it.evidence = _evidence_refs(it, summaries, runs, sel.evidence_root, out, pages)
        if it.checks and docs.is_file():
            it.evidence.append(EvidenceRef(label="Data Docs", kind="data_docs", href=_rel(docs, out)))


def _card(scorecard: Any, sel: Selection) -> dict[str, Any]:
    card = scorecard if scorecard is not None else sel.scorecard
    if isinstance(card, (str, os.PathLike)):
        return read_scorecard(card)
    return dict(card or {})


@dataclass
class _Judged:
    """What the build found, before it is written."""

    items: list[ItemResult]
    scores: list
    every: list[SignOff]
    counted: list[SignOff]
    claims: list = field(default_factory=list)  # sign-offs on this evidence not bound to their reviewer


def _judge(summaries: dict[str, ValidationSummary], suites: list[SuiteFile], card: dict[str, Any], settings: Any,
           words: Wording, basis: str, earlier: list[SignOff] | None) -> _Judged:
    """Items from the checks and the reviewers' scores, with the sign-offs counted on this evidence."""
    scores = parse_scorecard({k: card[k] for k in ("reviewers", "scores") if k in card}, "scorecard")
    items = (check_items(summaries, suites, settings.rules, words.signals, words.table)
             + experience_items(scores, settings.rules, words.table))
    given = parse_signoffs(card.get("signoffs"), "signoffs")
    check_signoffs(given, items, settings.reviewers)
    every = with_basis(given, basis) + list(earlier or [])
    counted, claims = verify_signoffs([s for s in every if s.basis == basis], settings.reviewers, words)
    apply_signoffs(items, counted, words)
    return _Judged(items, scores, every, counted, claims)


def _window(sel: Selection, runs: dict[str, RunEvidence], summaries: dict[str, ValidationSummary]) -> Any:
    """Every run of the window, each with its stored (or, for the judged ones, trusted) summary."""
    all_runs = find_runs(sel.evidence_root)
    stored = {str(ev.run_dir): load_summary(ev) for ev in all_runs}
    stored.update({str(runs[tc].run_dir): s for tc, s in summaries.items()})
    return stability([ev for ev in all_runs if ev.test_class in TEST_CLASSES], stored)


def _notes(sel: Selection, runs: dict[str, RunEvidence], words: Wording, out: Path) -> list[str]:
    notes = [words.t("note.not_validated")] + [words.t("note.skipped_run", path=_rel(p, out)) for p, _ in sel.skipped]
    if "utilization" in runs:
        notes.insert(0, words.t("note.aggregated"))
    return notes + replay_figures.replay_notes(runs, words)


def _sources(runs: dict[str, RunEvidence], problems: dict[str, list[Problem]], words: Wording) -> list[SourceRun]:
    return [SourceRun(test_class=tc, dag_id=ev.dag_id, run_id=ev.run_id, run_dir=ev.rel_dir, window=ev.window,
                      platform=dict(ev.manifest.get("platform") or {}), plan_hash=ev.plan_hash or None,
                      problems=[words.reason(p.code, p.args) for p in problems.get(tc, [])],
                      **_intake(ev.manifest.get("intake") or {}, words))
            for tc, ev in ordered(runs)]


def _intake(receivers: dict, words: Wording) -> dict:
    """What each evidence receiver refused during the run (the manifest's ``intake``), counted and worded."""
    counts, worded = {}, []
    for name, r in sorted(receivers.items()):
        if not isinstance(r, dict):
            continue
        who = words.t(f"intake.{name}")
        n = r.get("refused") if r.get("authenticated") else None
        counts[name] = n
        key = "intake.refused" if n is not None else ("intake.open" if r.get("authenticated") is False
                                                      else "intake.uncounted")
        worded.append(words.t(key, receiver=who, n=n))
    return {"refused_at_intake": counts, "intake": worded}


def build_report(path: str | Path | Selection, out_dir: str | Path | None = None, plan: Any = None,
                 scorecard: Any = None, suites_dir: str | Path | None = None, language: str | None = None,
                 now: datetime | None = None, earlier_signoffs: list[SignOff] | None = None) -> BuildResult:
    """Judge every item from the stored validations, decide, and write HTML (with its summary page),
    summary.html, Markdown, JSON, JUnit and every evidence table as HTML and CSV.

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
    what = judged([ev for _, ev in ordered(runs)], settings, sel.plan)

    summaries, problems = judged_summaries(runs, suites)
    for summary in summaries.values():
        for c in summary.checks:
            c.reason = words.check_reason(c)
    basis = evidence_basis(runs.values())
    j = _judge(summaries, suites, _card(scorecard, sel), settings, words, basis, earlier_signoffs)
    pages = write_pages(runs, out, lambda tb, tc: render_table_page(words.language, what.timezone, tb, tc))
    _details(j.items, runs, summaries, sel, out, pages)

    decision, reasons = rules_mod.decide(j.items, settings.rules, words.t)
    for it in j.items:
        it.decides = None if it.verdict is Verdict.PASS else rules_mod.outcome_rule(it, settings.rules)
    found = rules_mod.findings(j.items)
    held = rules_mod.blocking(found, j.items, settings.rules)
    stab = _window(sel, runs, summaries)
    charts = pictures.build_charts(runs, words, what.timezone)
    served, captions = service_charts.service_charts(runs, words, what.timezone)  # a chart per online service
    charts.update(served)
    charts.update(cost_charts.cost_charts(runs, words, what.timezone))  # shown in the cost attribution item
    charts.update(pictures.stability_charts(stab, words))
    docs = data_docs_index(sel.evidence_root)
    report = Report(
        title=words.t("title"), language=words.language,
        generated_at=(now or datetime.now(timezone.utc)).isoformat(), evidence_root=_rel(sel.evidence_root, out),
        subject=what, basis=basis, sources=_sources(runs, problems, words),
        decision=decision, decision_reasons=reasons, items=j.items,
        scope=rules_mod.scope(j.items, reason=lambda st, ids: words.t(f"scope_reason.{st.value}",
                                                                      items=words.items(ids))),
        findings=found + plan_findings(what, words.t)
        + threshold_findings([ev for _, ev in ordered(runs)], settings.thresholds, words.t)
        + sharing_findings(list(runs.values()), words.t)
        + memory_isolation_findings(list(runs.values()), words.t),
        blocking=held,
        coverage=coverage(summaries, suites, j.items), key_figures=key_figures(runs, summaries, words),
        signoff=blocks(j.items, decision.value, j.counted, [s for s in j.every if s.basis != basis],
                       settings.reviewers, j.claims),
        failure_records=_linked(figures.failure_records_table(runs), pages), stability=stab,
        data_docs=_rel(docs, out) if docs.is_file() else None, notes=_notes(sel, runs, words, out), charts=charts,
        chart_captions=captions)
    paths = write_outputs(report, out)
    paths["junit"] = write_junit(report, out)
    (out / "scorecard.json").write_text(json.dumps([s.model_dump() for s in j.scores], indent=1,
                                                   ensure_ascii=False), encoding="utf-8")
    kept = {"scores": [s.model_dump() for s in j.scores], "signoffs": [s.model_dump(mode="json") for s in j.every]}
    paths["inputs"] = write_inputs(out, sel, kept, words.language, settings.plan or sel.plan)
    return BuildResult(report, out, paths)


def _linked(tb: EvidenceTable | None, pages: dict[str, list[EvidenceRef]]) -> EvidenceTable | None:
    if tb is not None:
        tb.links = pages.get(tb.source, [])
    return tb
