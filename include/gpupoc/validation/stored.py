"""A run's stored validation, read back and checked against the evidence it validated.

The report takes these summaries as its input; validation runs before it (``validate_run``). A summary keeps
the sha256 of every table it validated, the plan hash and the suite parameters: a table, a result, the plan
hash or the parameters that changed since, or a table that no longer matches the run's manifest, is a
:class:`Problem` naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path

from gpupoc.evidence.reader import Problem, ProblemKind, RunEvidence, file_error
from gpupoc.validation.models import ValidationSummary

SUMMARY_FILE = "summary.json"


def summary_file(ev: RunEvidence) -> Path:
    return ev.run_dir / "validation" / SUMMARY_FILE


def load_summary(ev: RunEvidence) -> ValidationSummary | None:
    """The stored validation summary of a run; None when it was never validated or cannot be read."""
    return read_summary(ev)[0]


def read_summary(ev: RunEvidence) -> tuple[ValidationSummary | None, Problem | None]:
    """(summary, None), (None, None) when the run was never validated, or (None, the problem) when unreadable."""
    p = summary_file(ev)
    if not p.is_file():
        return None, None
    try:
        return ValidationSummary.model_validate(json.loads(p.read_text(encoding="utf-8"))), None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        detail = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        return None, Problem(ProblemKind.UNREADABLE, f"validation/{SUMMARY_FILE}", detail)


def summary_problems(ev: RunEvidence, summary: ValidationSummary) -> list[Problem]:
    """What changed since ``summary`` was written: validated tables, stored results, the plan hash, the
    suite parameters."""
    if not summary.inputs and not summary.results:
        return [Problem(ProblemKind.NOT_VALIDATED, f"validation/{SUMMARY_FILE}")]
    out: list[Problem] = []
    for rel, sha in sorted({**summary.inputs, **summary.results}.items()):
        path = ev.path_of(rel)
        if not path.is_file():
            out.append(Problem(ProblemKind.MISSING, rel))
        elif ev.sha256(path) != sha:
            err = file_error(path)
            out.append(Problem(ProblemKind.UNREADABLE, rel, err) if err else
                       Problem(ProblemKind.CHANGED_AFTER_VALIDATION, rel))
    if summary.plan_hash != ev.plan_hash:
        out.append(Problem(ProblemKind.PLAN_CHANGED, "manifest.json"))
    if "parameters" in summary.model_fields_set and summary.parameters != ev.suite_parameters:
        out.append(Problem(ProblemKind.PARAMETERS_CHANGED, "manifest.json"))  # (summaries before them: no field)
    return out


def run_problems(ev: RunEvidence, summary: ValidationSummary | None) -> list[Problem]:
    """Every reason not to trust the run: its manifest's problems and its summary's, one per file (a file
    changed after validation is named so, not twice)."""
    found = summary_problems(ev, summary) if summary is not None else []
    seen = {p.path for p in found}
    return found + [p for p in ev.problems() if p.path not in seen]


def _problem_for(table: str, problems: list[Problem]) -> Problem:
    """The problem of the check's own table file if there is one, else the run's first."""
    name = table.removeprefix("derived.")
    own = [p for p in problems if Path(p.path).name == f"{name}.parquet"]
    return (own or problems)[0]


def distrusted(summary: ValidationSummary, problems: list[Problem]) -> ValidationSummary:
    """A copy of ``summary`` whose every check is NOT_VERIFIED, naming the file that cannot be trusted."""
    from gpupoc.validation.models import Verdict
    from gpupoc.validation.reasons import word

    out = summary.model_copy(deep=True)
    for suite in out.suites:
        for c in suite.checks:
            p = _problem_for(c.table, problems)
            c.verdict, c.failure_class = Verdict.NOT_VERIFIED, None
            c.reason_code, c.reason_args = p.code, p.args
            c.reason = word(p.code, p.args)
    return out
