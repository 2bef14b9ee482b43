"""
# POC report

Compiles the tiered go-live report from the latest evidence of each test class and from the whole POC
window: every item with its tier, verdict and evidence, the decision (go live, limited go-live, postpone,
later optimization) by the plan's rules, the scope, the failure records and the stability across runs.

Runs when all five test classes have published new evidence (their Assets), and by hand. The trigger form
takes one reviewer's experience scores (UI usability, documentation, training cost; 1-5 with comments) or
a scorecard file; the scores are kept with the run's report (`scorecard.json`).
Outputs: HTML (works offline), Markdown and JSON under `<evidence_root>/report/<run_id>/`.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from airflow.sdk import DAG, Param, get_current_context, task

from gpupoc.dags.assets import EVIDENCE
from gpupoc.demo.report_form import fields
from gpupoc.pipeline.common import default_plan_path

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
        """Build the report of this run; the trigger form's scores become its scorecard."""
        from gpupoc.demo.report_form import report_params
        from gpupoc.pipeline.common import plan_path, repo_root
        from gpupoc.report.airflow import run_report

        c = get_current_context()
        params = dict(c["params"])
        return run_report(plan_path(params.get("plan")), c["run_id"], report_params(params, repo_root()))

    compile_report()
