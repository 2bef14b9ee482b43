"""What the ``poc_report`` DAG's task calls: build the report of one report run from stored evidence.

Kept free of Airflow imports so it is testable; the task passes the plan path, its run id and its Params.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpupoc.report.build import build_report


def report_out_dir(plan: Any, run_id: str) -> Path:
    """``<report.output_dir or <evidence_root>/report>/<run id>`` (a rerun rewrites the same directory)."""
    from gpupoc.evidence import safe_segment

    base = plan.resolve_path(plan.report.output_dir) if plan.report.output_dir else plan.evidence_root_path / "report"
    return base / safe_segment(run_id)


def run_report(plan_path: str | Path, run_id: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build the report; ``params`` are the trigger form's values (``reviewers``/``scores`` as in a scorecard,
    optionally ``language``). Returns a small summary for XCom: decision, item verdicts and output paths."""
    from gpupoc.plan import load_plan

    plan = load_plan(plan_path)
    params = dict(params or {})
    scorecard: Any = {k: params[k] for k in ("reviewers", "scores") if params.get(k)}
    if not scorecard and plan.report.scorecard:
        scorecard = plan.resolve_path(plan.report.scorecard)
        if not Path(scorecard).is_file():
            from gpupoc.exceptions import ConfigError

            raise ConfigError(str(plan_path), [f"report.scorecard: {scorecard} not found; write the reviewers' "
                                               "scorecard there or remove the field"])
    res = build_report(plan.evidence_root_path, out_dir=report_out_dir(plan, run_id), plan=plan,
                       scorecard=scorecard, language=params.get("language") or None)
    return {"decision": res.report.decision.value,
            "items": {i.id: i.verdict.value for i in res.report.items},
            "paths": {k: str(v) for k, v in res.paths.items()}}
