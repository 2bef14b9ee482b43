"""Two DAGs for the operator test: the same three pods through the real KubernetesPodOperator, sync and deferrable.

Read at parse time from the environment: GPUPOC_TEST_KUBECONFIG, GPUPOC_TEST_CONTEXT, GPUPOC_TEST_NAMESPACE.
"""

import os
from datetime import datetime

from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from airflow.sdk import DAG
from kubernetes.client import models as k8s

OUTCOMES = {
    "succeeds": ("gpupoc/workload:1.0", ["--mode", "train", "--duration", "3"]),
    "exits_nonzero": ("gpupoc/workload:1.0", ["--mode", "fail", "--duration", "2", "--exit-code", "3"]),
    "missing_image": ("registry.invalid/team/does-not-exist:1.0", []),
}

for mode in ("sync", "deferrable"):
    with DAG(dag_id=f"kpo_{mode}", schedule=None, start_date=datetime(2026, 1, 1), catchup=False):
        for task_id, (image, args) in OUTCOMES.items():
            KubernetesPodOperator(
                task_id=task_id,
                name=f"kpo-{mode[:4]}-{task_id.replace('_', '-')}",
                namespace=os.environ["GPUPOC_TEST_NAMESPACE"],
                image=image,
                arguments=args,
                config_file=os.environ["GPUPOC_TEST_KUBECONFIG"],
                cluster_context=os.environ["GPUPOC_TEST_CONTEXT"],
                in_cluster=False,
                get_logs=True,
                log_events_on_failure=True,
                deferrable=(mode == "deferrable"),
                startup_timeout_seconds=60,
                startup_check_interval_seconds=1,
                poll_interval=1,
                on_finish_action="keep_pod",
                do_xcom_push=False,
                retries=0,
                container_resources=k8s.V1ResourceRequirements(limits={"nvidia.com/gpu": "1", "memory": "1Gi"}),
                tolerations=[k8s.V1Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")],
                node_selector={"gpupoc.io/pool": "training"},
            )
