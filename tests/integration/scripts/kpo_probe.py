"""Run one real KubernetesPodOperator against the simulated cluster through ``dag.test()``.

Usage: kpo_probe.py KUBECONFIG CONTEXT NAMESPACE MODE(sync|deferrable) IMAGE [ARG ...]
Prints one JSON line: {"dag_run_state", "task_state", "pod_name"}; exit 0 whatever the outcome.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone


def main() -> int:
    kubeconfig, context, namespace, mode, image, *args = sys.argv[1:]
    from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
    from airflow.sdk import DAG

    with DAG(dag_id=f"kpo_probe_{mode}", schedule=None, start_date=datetime(2026, 1, 1), catchup=False) as dag:
        KubernetesPodOperator(
            task_id="probe",
            name="kpo-probe",
            namespace=namespace,
            image=image,
            arguments=list(args),
            config_file=kubeconfig,
            cluster_context=context,
            in_cluster=False,
            get_logs=True,
            log_events_on_failure=True,
            deferrable=(mode == "deferrable"),
            startup_timeout_seconds=60,
            startup_check_interval_seconds=1,
            poll_interval=1,
            on_finish_action="keep_pod",
            retries=0,
        )
    dr = dag.test(logical_date=datetime.now(timezone.utc))
    ti = dr.get_task_instance("probe")
    print(json.dumps({"dag_run_state": str(dr.state), "task_state": str(ti.state if ti else None)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
