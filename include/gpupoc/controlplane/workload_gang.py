"""Gangs through the Workload API of Kubernetes v1.37 (``gpupoc controlplane up --workload-api``: the
``GenericWorkload`` gate and ``scheduling.k8s.io/v1beta1``), as pure builders: a Workload with one gang
PodGroupTemplate, the PodGroup a workload controller would make from it (``spec.workloadRef``), and pods that
name the PodGroup in ``spec.schedulingGroup.podGroupName``. kube-scheduler's GangScheduling plugin keeps every
pod of the group from binding until ``minCount`` of them fit (all or nothing)."""

from __future__ import annotations

from gpupoc.controlplane.dra import TOLERATED
from gpupoc.kube.workload_api import INITIALLY_SCHEDULED, TEMPLATE, initially_scheduled, pod_group, workload

__all__ = ["INITIALLY_SCHEDULED", "TEMPLATE", "gang", "gang_pod", "initially_scheduled", "pod_group", "workload"]


def gang_pod(name: str, namespace: str, group: str, gpus: int) -> dict:
    """A pod of the gang asking ``gpus`` whole GPUs as ``nvidia.com/gpu`` (DRA-backed under ``--dra``)."""
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"gpupoc.io/gang": group}},
            "spec": {"schedulingGroup": {"podGroupName": group},
                     "containers": [{"name": "main", "image": "busybox", "resources": resources}],
                     "tolerations": [{"key": k, "operator": "Exists", "effect": "NoSchedule"} for k in TOLERATED]}}


def gang(name: str, namespace: str, size: int, gpus: int, min_count: int | None = None) -> list[dict]:
    """The Workload, its PodGroup and ``size`` pods (``min_count`` defaults to all of them)."""
    need = size if min_count is None else min_count
    return [workload(name, namespace, need), pod_group(name, namespace, need),
            *(gang_pod(f"{name}-{i}", namespace, name, gpus) for i in range(size))]
