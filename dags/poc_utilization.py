"""
# Utilization

A mixed window of training, inference and allocated-but-idle work, then views by team, task type, pool,
hour and GPU memory: allocated versus used GPU-hours, with queue pressure beside them.

**Passes when** the views support a capacity decision (an average alone does not). Evidence: `utilization`,
`workload_runs`, `platform_info`.
The Airflow DAG comes from `gpupoc.dags.factory.build_dag`, shared by the five test classes.
"""

from gpupoc.dags.factory import build_dag

dag = build_dag("utilization", __doc__)
