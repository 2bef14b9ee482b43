"""``compare``: each candidate's evidence judged by its own report (the report build, unchanged), then put
side by side: decisions and scopes, the matrix, the figures, the charts and the procurement summary."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gpupoc.compare import charts, figures as F
from gpupoc.compare.inputs import Source, bundle_plan, check_same_plan, parse_labels, read_source
from gpupoc.compare.matrix import build_matrix, ran
from gpupoc.compare.models import Comparison, PlatformEntry
from gpupoc.compare.procurement import must_passed, summarise
from gpupoc.report.models import Report
from gpupoc.report.publish import publish_report

PLATFORMS_DIR = "platforms"


@dataclass
class CompareResult:
    comparison: Comparison
    out_dir: Path
    paths: dict[str, Path]
    warnings: list[str]


def _entry(src: Source, report: Report, report_dir: Path, out: Path, plan_hash: str) -> PlatformEntry:
    s = report.subject
    return PlatformEntry(
        label=src.label, source=os.path.relpath(src.given, out), source_kind=src.kind,
        report_dir=os.path.relpath(report_dir, out),
        adapter=s.adapter or next(iter(src.manifest_values("platform_choice")), None),
        platform_name=next(iter(src.manifest_values("platform_name")), None) or s.platform,
        kubernetes_version=s.kubernetes_version, simulated=s.simulated, candidate=s.candidate,
        plan_name=next(iter(src.manifest_values("plan_name")), None) or s.plan_name, plan_hash=plan_hash or None,
        test_classes=sorted(ran(report)), decision=report.decision, decision_reasons=list(report.decision_reasons),
        scope=[sc.model_dump(mode="json") for sc in report.scope],
        blocking=[f"{f.item}: {f.text}" for f in report.blocking], must_passed=must_passed(report))


def _judge(src: Source, out: Path, plan: Any, scorecard: Any, language: str | None) -> tuple[Report, Path]:
    """The candidate's own report, built under ``<out>/platforms/<label>`` as ``gpupoc report`` builds it."""
    report_dir = out / PLATFORMS_DIR / src.label
    own = plan.get(src.label) if isinstance(plan, dict) else plan  # the plan its runs read, when each has its own
    pub = publish_report(src.selection.default_out if src.kind == "bundle" else src.given, out_dir=report_dir,
                         plan=own or bundle_plan(src), scorecard=scorecard, language=language,
                         pdf=False, bundle=False)
    return pub.build.report, report_dir


def compare(labels: list[str], out_dir: str | Path, plan: Any = None, scorecard: Any = None,
            language: str | None = None, pdf: bool = True, now: datetime | None = None) -> CompareResult:
    """Compare the candidates ``labels`` (``NAME=ROOT_OR_BUNDLE``); write comparison.json, .md, .html and .pdf
    under ``out_dir``. ``plan``: the reports' plan (path or Plan), or one per label. Refuses (ComparisonRefused) evidence of other plans, changed files and bad labels."""
    from gpupoc.compare.render import write_outputs

    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    sources = [read_source(label, path.resolve(), out) for label, path in parse_labels(labels)]
    plan_hash = check_same_plan(sources)
    judged = {s.label: _judge(s, out, plan, scorecard, language) for s in sources}
    cands = [F.Candidate(s.label, judged[s.label][0], s.runs) for s in sources]
    matrix = build_matrix(judged, out)
    reports = {label: r for label, (r, _) in judged.items()}
    first = sources[0]
    comparison = Comparison(
        generated_at=(now or datetime.now(timezone.utc)).isoformat(),
        plan_name=next(iter(first.manifest_values("plan_name")), None) or reports[first.label].subject.plan_name,
        plan_hash=plan_hash or None,
        platforms=[_entry(s, *judged[s.label], out, plan_hash) for s in sources],
        matrix=matrix, figures=F.named_figures(cands) + F.report_figures(cands),
        procurement=summarise(reports, matrix),
        charts={"wait_cdf": charts.wait_cdf({c.label: F.wait_series(c) for c in cands}),
                "occupancy": charts.occupancy({c.label: F.occupancy_series(c) for c in cands})},
        notes=[n for s in sources for n in s.notes])
    paths, warnings = write_outputs(comparison, out, pdf)
    return CompareResult(comparison, out, paths, warnings)
