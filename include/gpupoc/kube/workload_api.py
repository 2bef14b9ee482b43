"""Gangs through the Workload API of Kubernetes v1.37 (``scheduling.k8s.io/v1beta1``, the ``GenericWorkload``
gate), as pure builders: a Workload with one gang PodGroupTemplate, the PodGroup a workload controller would make
from it (``spec.workloadRef``), and the pod field that names the PodGroup (``spec.schedulingGroup``).
kube-scheduler's GangScheduling plugin keeps every pod of the group from binding until ``minCount`` of them fit
(all or nothing) and records the outcome in the PodGroup's ``PodGroupInitiallyScheduled`` condition."""

from __future__ import annotations

API_VERSION = "scheduling.k8s.io/v1beta1"
API_PATH = f"/apis/{API_VERSION}"
TEMPLATE = "workers"
INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"


def workload(name: str, namespace: str, min_count: int, labels: dict | None = None) -> dict:
    """A Workload whose one PodGroupTemplate schedules ``min_count`` pods all or nothing."""
    return {"apiVersion": API_VERSION, "kind": "Workload",
            "metadata": {"name": name, "namespace": namespace, **({"labels": labels} if labels else {})},
            "spec": {"podGroupTemplates": [{"name": TEMPLATE,
                                            "schedulingPolicy": {"gang": {"minCount": min_count}}}]}}


def pod_group(workload_name: str, namespace: str, min_count: int, name: str | None = None,
              labels: dict | None = None) -> dict:
    """The PodGroup a controller makes from the Workload's template (the policy copied, the template named)."""
    return {"apiVersion": API_VERSION, "kind": "PodGroup",
            "metadata": {"name": name or workload_name, "namespace": namespace,
                         **({"labels": labels} if labels else {})},
            "spec": {"workloadRef": {"workloadName": workload_name, "templateName": TEMPLATE},
                     "schedulingPolicy": {"gang": {"minCount": min_count}}}}


def collection(kind: str, namespace: str) -> str:
    """``.../namespaces/<ns>/workloads`` or ``.../podgroups``."""
    return f"{API_PATH}/namespaces/{namespace}/{kind.lower()}s"


def initially_scheduled(group: dict) -> dict | None:
    """The PodGroup's ``PodGroupInitiallyScheduled`` condition, if kube-scheduler set one."""
    for c in (group.get("status") or {}).get("conditions") or []:
        if c.get("type") == INITIALLY_SCHEDULED:
            return c
    return None
