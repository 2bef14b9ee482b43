"""
# Queue congestion

A wave beyond the platform's capacity (mixed priorities, GPU counts and durations) is submitted as mapped
deferrable `KubernetesPodOperator` tasks, one per workload, each as its tenant. The pods are created held by
the pipeline's scheduling gate `gpupoc.io/wave-release`; `release_gate` lifts all gates together once every
pod exists, so the platform sees the wave arrive at once (the arrival spread is recorded).

`observe` snapshots every few seconds what the platform says about each waiting pod (reason, message, queue
position, ETA if offered). `collect_evidence` reconstructs each wait's bottleneck from capacity, quota,
priority and what was ahead, and scores the platform's explanation and any ETA against what happened.

**Passes when** every wait has an explanation a user can read. Evidence: `workload_runs`, `queue_snapshots`,
`explanations`, `platform_info` under `<evidence_root>/poc_queue_congestion/<run_id>/`.
The Airflow DAG comes from `gpupoc.dags.factory.build_dag`, shared by the five test classes.
"""

from gpupoc.dags.factory import build_dag

dag = build_dag("queue_congestion", __doc__)
