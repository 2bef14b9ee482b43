"""What one DAG run left behind: a test-class run's evidence and checks, or a report run's report.

Shown as a tab of the DAG run in the Airflow UI (``/runs/{dag_id}/{run_id}``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from gpupoc.ui.locations import UiPaths

REPORT_DAG = "poc_report"


def segment(value: str) -> str:
    """The directory name the pipeline gives a DAG or run id (see gpupoc.evidence.writer)."""
    from gpupoc.evidence.writer import safe_segment

    return safe_segment(value)


@dataclass
class RunView:
    """A run's evidence tables, check verdicts and Data Docs pages."""

    dag_id: str
    run_id: str
    rel_dir: str
    test_class: str = ""
    verified: bool | None = None
    not_verified: list = field(default_factory=list)
    tables: list[dict] = field(default_factory=list)
    checks: list[dict] = field(default_factory=list)
    docs: list[str] = field(default_factory=list)
    validated: bool = False


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def run_view(paths: UiPaths, dag_id: str, run_id: str) -> RunView | None:
    """The run's evidence, or None when the run wrote none (yet)."""
    run_dir = paths.evidence_root / segment(dag_id) / segment(run_id)
    manifest = _json(run_dir / "manifest.json")
    if not manifest:
        return None
    view = RunView(dag_id=dag_id, run_id=run_id, rel_dir=f"{run_dir.parent.name}/{run_dir.name}",
                   test_class=str(manifest.get("test_class", "")), verified=manifest.get("verified"),
                   not_verified=list(manifest.get("not_verified") or []))
    for name, t in sorted((manifest.get("tables") or {}).items()):
        view.tables.append({"name": name, "rows": t.get("rows"), "verified": t.get("verified"),
                            "source": t.get("source", ""), "reason": t.get("reason", ""), "path": t.get("path", "")})
    summary = _json(run_dir / "validation" / "summary.json")
    view.validated = bool(summary)
    for suite in summary.get("suites") or []:
        for c in suite.get("checks") or []:
            view.checks.append({k: c.get(k) for k in ("check_id", "item", "tier", "verdict", "signal", "reason",
                                                      "suite", "failure_class")})
    validations = paths.data_docs_dir / "validations"
    marker = f"{run_dir.parent.name}__{run_dir.name}"
    if validations.is_dir():
        view.docs = sorted(p.relative_to(paths.data_docs_dir).as_posix() for p in validations.rglob("*.html")
                           if marker in p.relative_to(validations).parts)
    return view


def report_for_run(paths: UiPaths, run_id: str) -> str | None:
    """Report id (directory name) the ``poc_report`` run ``run_id`` wrote, when it exists."""
    name = segment(run_id)
    return name if (paths.report_dir / name / "report.html").is_file() else None
