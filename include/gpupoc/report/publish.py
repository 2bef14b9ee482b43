"""Every output of a report, in order: validate what is not validated yet, build, print, seal.

What ``gpupoc report`` and the ``poc_report`` DAG call. Validation runs first (runs a class DAG did not
validate, or all of them with ``revalidate``), with the suite parameters each run stored, never rebuilt from
the report's plan (a plan whose thresholds differ is a finding of the report); the build then only reads. report.pdf needs headless Chromium:
when it is missing, the PDF is left out with a warning naming ``make test-deps``, and everything else is
written. The bundle seals the report with the evidence it judged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gpupoc.exceptions import GpupocError, ToolMissing
from gpupoc.report.build import BuildResult, build_report
from gpupoc.report.inputs import Selection, select
from gpupoc.report.models import SignOff

log = logging.getLogger(__name__)


@dataclass
class Published:
    """The built report, where each format went, and what could not be produced."""

    build: BuildResult
    paths: dict[str, Path]
    warnings: list[str] = field(default_factory=list)


def validate_first(sel: Selection, suites_dir: str | Path | None = None, revalidate: bool = False) -> list[str]:
    """Validate each selected run that has no stored validation (every run with ``revalidate``) with the suite
    parameters stored with it, never the report's plan's (``validation.parameters``); return the run
    directories validated."""
    from gpupoc.validation.runner import validate_run
    from gpupoc.validation.stored import summary_file

    done = []
    for ev in sel.runs.values():
        if revalidate or not summary_file(ev).is_file():
            validate_run(ev.run_dir, suites_dir, sel.evidence_root)
            done.append(ev.rel_dir)
    return done


def publish_report(path: str | Path, out_dir: str | Path | None = None, plan: Any = None, scorecard: Any = None,
                   suites_dir: str | Path | None = None, revalidate: bool = False, language: str | None = None,
                   earlier_signoffs: list[SignOff] | None = None, pdf: bool = True, bundle: bool = True,
                   bundle_out: str | Path | None = None, now: datetime | None = None) -> Published:
    """Validate, then write report.html (summary on top), summary.html, report.md, report.json,
    report.junit.xml, report.pdf (when Chromium is there) and the bundle."""
    sel = select(Path(path))
    validated = validate_first(sel, suites_dir, revalidate)
    if validated:
        sel = select(Path(path))  # read the runs again, with their new validation
    res = build_report(sel, out_dir=out_dir, plan=plan, scorecard=scorecard, suites_dir=suites_dir,
                       language=language, now=now, earlier_signoffs=earlier_signoffs)
    paths, warnings = dict(res.paths), []
    if pdf:
        from gpupoc.report.pdf import print_report_pdf

        try:
            paths["pdf"] = print_report_pdf(res.out_dir)
        except ToolMissing as exc:
            warnings.append(f"report.pdf not written: {exc}")
        except GpupocError as exc:  # Chromium ran and failed: the other formats stand
            warnings.append(f"report.pdf not written: {exc}")
    if bundle:
        from gpupoc.report.bundle import bundle_path, create, spec_for_report

        paths["bundle"] = create(spec_for_report(res.out_dir), bundle_out or bundle_path(res.out_dir))
    for w in warnings:
        log.warning("%s", w)
    return Published(res, paths, warnings)
