"""Gangs through the Workload API of Kubernetes v1.37 (``gpupoc controlplane up --workload-api``: the
``GenericWorkload`` gate and ``scheduling.k8s.io/v1beta1``), as pure builders: a Workload with one gang
PodGroupTemplate, the PodGroup a workload controller would make from it (``spec.workloadRef``), and pods that
name the PodGroup in ``spec.schedulingGroup.podGroupName``. kube-scheduler's GangScheduling plugin keeps every
pod of the group from binding until ``minCount`` of them fit (all or nothing)."""

from __future__ import annotations

from gpupoc.controlplane.dra import TOLERATED

API_VERSION = "scheduling.k8s.io/v1beta1"
TEMPLATE = "workers"
INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"  # the PodGroup's condition kube-scheduler sets


def workload(name: str, namespace: str, min_count: int) -> dict:
    """A Workload whose one PodGroupTemplate schedules ``min_count`` pods all or nothing."""
    return {"apiVersion": API_VERSION, "kind": "Workload", "metadata": {"name": name, "namespace": namespace},
            "spec": {"podGroupTemplates": [{"name": TEMPLATE,
                                            "schedulingPolicy": {"gang": {"minCount": min_count}}}]}}


def pod_group(workload_name: str, namespace: str, min_count: int, name: str | None = None) -> dict:
    """The PodGroup a controller makes from the Workload's template (the policy copied, the template named)."""
    return {"apiVersion": API_VERSION, "kind": "PodGroup",
            "metadata": {"name": name or workload_name, "namespace": namespace},
            "spec": {"workloadRef": {"workloadName": workload_name, "templateName": TEMPLATE},
                     "schedulingPolicy": {"gang": {"minCount": min_count}}}}


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


def initially_scheduled(group: dict) -> dict | None:
    """The PodGroup's ``PodGroupInitiallyScheduled`` condition, if kube-scheduler set one."""
    for c in (group.get("status") or {}).get("conditions") or []:
        if c.get("type") == INITIALLY_SCHEDULED:
            return c
    return None
