"""What ``gpupoc report`` prints: the decision, each item's verdict, untrusted runs and the files written, in the
report's language (English lines keep their ``decision: go-live`` form, which scripts read)."""

from __future__ import annotations

from pathlib import Path

from gpupoc.report.models import Report
from gpupoc.report.wording import Wording


def _english(report: Report, paths: dict[str, Path]) -> list[str]:
    out = [f"decision: {report.decision.value}"]
    out += [f"  {it.tier.value:<10} {it.id:<24} {it.verdict.value}" for it in report.items]
    out += [f"  not trusted: {src.test_class} {src.run_id}: {problem}" for src in report.sources
            for problem in src.problems]
    return out + [f"{kind}: {path}" for kind, path in paths.items()]


def _worded(report: Report, paths: dict[str, Path], w: Wording) -> list[str]:
    sep = w.t("label_sep")
    out = [f"{w.t('section.decision')}{sep}{w.t('decision.' + report.decision.value)}"]
    out += [f"  {w.t('tier.' + it.tier.value)}  {w.item(it.id)}{sep}{w.t('verdict.' + it.verdict.value)}"
            for it in report.items]
    out += [f"  {w.t('console.not_trusted')}{sep}{w.t('class.' + src.test_class)} {src.run_id}{sep}{problem}"
            for src in report.sources for problem in src.problems]
    return out + [f"{w.table.get('console.file.' + kind, kind)}{sep}{path}" for kind, path in paths.items()]


def report_lines(report: Report, paths: dict[str, Path]) -> list[str]:
    """The lines ``gpupoc report`` prints on stdout for ``report`` and the files it wrote."""
    words = Wording(report.language)
    return _english(report, paths) if words.language == "en" else _worded(report, paths, words)


def warning_line(report: Report, warning: str) -> str:
    """A warning on stderr, its prefix in the report's language (the warning itself names a file or a tool)."""
    words = Wording(report.language)
    if words.language == "en":
        return f"warning: {warning}"
    return f"{words.t('console.warning')}{words.t('label_sep')}{warning}"
