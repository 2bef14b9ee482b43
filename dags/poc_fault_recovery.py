"""
# Fault recovery

Each failure is provoked once: a non-zero exit, a missing image, an out-of-memory kill, a task that hangs
past its timeout and a node failing mid-run. Each is recorded as trigger, platform behaviour, what the user
saw, what operators saw and the recovery, with whether the logs are still readable, the events, the retries
(Airflow's and the platform's), the alerts and how long the GPUs took to be released.

**Passes when** the evidence chain of every failure is complete. Evidence: `failure_records`,
`workload_runs`, `platform_info`.
The Airflow DAG comes from `gpupoc.dags.factory.build_dag`, shared by the five test classes.
"""

from gpupoc.dags.factory import build_dag

dag = build_dag("fault_recovery", __doc__)
