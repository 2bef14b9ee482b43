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


def _priority(priority_class: str | None, priority: int | None) -> dict:
    """kube-scheduler refuses a group whose pods' priority is not the group's ("all pods in a single pod group
    should have the same priority as the pod group's priority"): the pods' class and value."""
    return {**({"priorityClassName": priority_class} if priority_class else {}),
            **({"priority": priority} if priority is not None else {})}


def workload(name: str, namespace: str, min_count: int, labels: dict | None = None, priority_class: str | None = None,
             priority: int | None = None) -> dict:
    """A Workload whose one PodGroupTemplate schedules ``min_count`` pods all or nothing."""
    return {"apiVersion": API_VERSION, "kind": "Workload",
            "metadata": {"name": name, "namespace": namespace, **({"labels": labels} if labels else {})},
            "spec": {"podGroupTemplates": [{"name": TEMPLATE, "schedulingPolicy": {"gang": {"minCount": min_count}},
                                            **_priority(priority_class, priority)}]}}


def pod_group(workload_name: str, namespace: str, min_count: int, name: str | None = None,
              labels: dict | None = None, priority_class: str | None = None, priority: int | None = None) -> dict:
    """The PodGroup a controller makes from the Workload's template (the policy and priority copied, the
    template named)."""
    return {"apiVersion": API_VERSION, "kind": "PodGroup",
            "metadata": {"name": name or workload_name, "namespace": namespace,
                         **({"labels": labels} if labels else {})},
            "spec": {"workloadRef": {"workloadName": workload_name, "templateName": TEMPLATE},
                     "schedulingPolicy": {"gang": {"minCount": min_count}}, **_priority(priority_class, priority)}}


def collection(kind: str, namespace: str) -> str:
    """``.../namespaces/<ns>/workloads`` or ``.../podgroups``."""
    return f"{API_PATH}/namespaces/{namespace}/{kind.lower()}s"


def initially_scheduled(group: dict) -> dict | None:
    """The PodGroup's ``PodGroupInitiallyScheduled`` condition, if kube-scheduler set one."""
    for c in (group.get("status") or {}).get("conditions") or []:
        if c.get("type") == INITIALLY_SCHEDULED:
            return c
    return None
