"""
# POC report

Compiles the tiered go-live report from the latest validated evidence of each test class and from the
whole POC window: a one-page summary, every item with its tier, verdict and evidence, the decision (go live,
limited go-live, postpone, later optimization) by the plan's rules, the scope, the sign-off blocks, the
failure records and the stability across runs. Evidence that changed after validation is not verified.

Runs when all five test classes have published new evidence (their Assets), and by hand. The trigger form
takes one reviewer's experience scores (UI usability, documentation, training cost; 1-5 with comments) or
a scorecard file, and one reviewer's sign-off: a confirmation or an objection (with a comment) of the
role's block (security: must items, platform: key items, business: experience items, management: the
decision). A sign-off counts only when the run was triggered by the reviewer's own Airflow user (the plan's
`report.reviewers[].airflow_user`); any other is shown as an unverified claim. Outputs under
`<evidence_root>/report/<run_id>/`: report.html, summary.html, report.md, report.json, report.junit.xml,
report.pdf (with Chromium), and the sealed bundle `<run_id>.bundle.tar.gz`.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from airflow.sdk import DAG, Param, get_current_context, task

from gpupoc.dags.assets import EVIDENCE
from gpupoc.pipeline.common import default_plan_path
from gpupoc.report.form import fields

with DAG(
    dag_id="poc_report",
    doc_md=__doc__,
    schedule=list(EVIDENCE.values()),
    start_date=datetime(2026, 1, 1, tzinfo=timezone.utc),
    catchup=False,
    max_active_runs=1,
    tags=["gpupoc", "poc", "report"],
    default_args={"owner": "gpupoc", "retries": 1, "retry_delay": timedelta(seconds=10)},
    params={name: Param(**kw) for name, kw in fields(str(default_plan_path())).items()},
) as dag:

    @task
    def compile_report() -> dict:
        """Build, print and seal the report of this run; the trigger form's scores become its scorecard and
        its sign-off is dated with the run and stamped with the user who triggered it, Airflow's
        ``dag_run.triggering_user_name`` (a rerun gives the same report)."""
        from gpupoc.pipeline.common import plan_path, repo_root
        from gpupoc.report.airflow import run_report
        from gpupoc.report.form import report_params

        c = get_current_context()
        params = dict(c["params"])
        run = c["dag_run"]
        at = getattr(run, "run_after", None) or getattr(run, "logical_date", None) or getattr(run, "start_date", None)
        at_text = at.isoformat() if at else c["run_id"]
        user = getattr(run, "triggering_user_name", None)  # None: started by the Assets, nobody signed in
        return run_report(plan_path(params.get("plan")), c["run_id"],
                          report_params(params, repo_root(), at_text, signed_in_as=user))

    compile_report()
