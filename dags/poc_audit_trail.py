"""
# Audit trail

Resource requests, a quota change by an administrator (restored afterwards), task runs and an artifact
hand-over (the producer writes it; its hash, location, producer and consumer are recorded). Every action
the pipeline takes is kept in its own ledger and matched against the platform's audit log: who, what, when.

**Passes when** every record is traceable. Evidence: `ledger`, `audit_matches`, `artifacts`,
`workload_runs`, `platform_info`.
The Airflow DAG comes from `gpupoc.dags.factory.build_dag`, shared by the five test classes.
"""

from gpupoc.dags.factory import build_dag

dag = build_dag("audit_trail", __doc__)
