"""What the ``poc_report`` DAG's task calls: every output of one report run from stored evidence.

Kept free of Airflow imports so it is testable; the task passes the plan path, its run id, its Params (as
``gpupoc.report.form.report_params`` turns them into scores and sign-offs) and the run's time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def report_out_dir(plan: Any, run_id: str) -> Path:
    """``<report.output_dir or <evidence_root>/report>/<run id>`` (a rerun rewrites the same directory)."""
    from gpupoc.evidence import safe_segment

    base = plan.resolve_path(plan.report.output_dir) if plan.report.output_dir else plan.evidence_root_path / "report"
    return base / safe_segment(run_id)


def _scorecard(plan: Any, plan_path: str | Path, params: dict[str, Any]) -> dict[str, Any]:
    """The plan's scorecard file (its scores unless the form gives some, and its sign-offs) plus the form's."""
    from gpupoc.exceptions import ConfigError
    from gpupoc.report.scorecard import read_scorecard

    form = {k: params[k] for k in ("reviewers", "scores") if params.get(k)}
    card: dict[str, Any] = {}
    if plan.report.scorecard:
        path = plan.resolve_path(plan.report.scorecard)
        if Path(path).is_file():
            card = read_scorecard(path)
        elif not form:
            raise ConfigError(str(plan_path), [f"report.scorecard: {path} not found; write the reviewers' "
                                               "scorecard there or remove the field"])
    if form:
        card = {k: v for k, v in card.items() if k not in ("reviewers", "scores")} | form
    card["signoffs"] = list(card.get("signoffs") or []) + list(params.get("signoffs") or [])
    return card


def run_report(plan_path: str | Path, run_id: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build, print and seal the report; ``params`` are the trigger form's values (``reviewers``/``scores`` as in
    a scorecard, ``signoffs``, optionally ``language``). The form's sign-offs are kept in the ledger beside the
    report directories, so later report runs on the same evidence show them. Returns a small summary for
    XCom: decision, item verdicts, sign-off status per role, output paths and warnings."""
    from gpupoc.plan import load_plan
    from gpupoc.report.publish import publish_report
    from gpupoc.report.signoff import LEDGER, parse_signoffs, read_ledger, record, with_basis

    plan = load_plan(plan_path)
    params = dict(params or {})
    out = report_out_dir(plan, run_id)
    ledger = out.parent / LEDGER
    given = parse_signoffs(params.get("signoffs"), "signoffs")  # refuse a bad form before building
    pub = publish_report(plan.evidence_root_path, out_dir=out, plan=plan_path,
                         scorecard=_scorecard(plan, plan_path, params), language=params.get("language") or None,
                         earlier_signoffs=read_ledger(ledger, except_run=run_id))
    report = pub.build.report
    record(ledger, run_id, with_basis(given, report.basis))
    return {"decision": report.decision.value,
            "items": {i.id: i.verdict.value for i in report.items},
            "signoff": {b.role.value: b.status.value for b in report.signoff},
            "paths": {k: str(v) for k, v in pub.paths.items()}, "warnings": pub.warnings}
