"""Gangs: the pods of one multi-replica workload, submitted as ONE group in each adapter's own grouping.

- kube-scheduler: no gangs; the pods only carry ``gpupoc.io/gang`` (a partial placement is then a finding);
  with ``platform.options.gangs: workload-api``, a Workload and its PodGroup of ``scheduling.k8s.io/v1beta1``
  the pipeline creates (``minCount``), pods naming the PodGroup in ``spec.schedulingGroup`` (``kube/workload_api.py``);
- Kueue: a pod group, label ``kueue.x-k8s.io/pod-group-name`` and annotation
  ``kueue.x-k8s.io/pod-group-total-count`` (Kueue docs, "Run plain Pods": the Workload is named after the
  group and admitted once all its pods exist);
- Volcano: a ``scheduling.volcano.sh/v1beta1`` PodGroup the pipeline creates (``minMember``, ``queue``,
  ``priorityClassName``, ``minResources``), pods annotated ``scheduling.k8s.io/group-name``;
- KAI: a ``scheduling.run.ai/v2alpha2`` PodGroup the pipeline creates (``minMember``, ``queue``,
  ``priorityClassName``, ``preemptibility``), pods annotated ``pod-group-name`` (KAI's
  ``constants.PodGroupNameAnnotation``) and labelled with their queue.

A gang's object name is its plan key plus five hex of the run id, so runs on different days never share a
group. Pure functions: no cluster access.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from gpupoc.kube import workload_api
from gpupoc.kube.resources import GPU
from gpupoc.plan.model import Adapter, Platform, Tenant, Workload
from gpupoc.podspec import labels as L

KUEUE_GROUP = "kueue.x-k8s.io/pod-group-name"
KUEUE_GROUP_COUNT = "kueue.x-k8s.io/pod-group-total-count"
VOLCANO_GROUP = "scheduling.k8s.io/group-name"
KAI_GROUP = "pod-group-name"
KAI_PREEMPTIBILITY = "kai.scheduler/preemptibility"
VOLCANO_PODGROUPS = "/apis/scheduling.volcano.sh/v1beta1"
KAI_PODGROUPS = "/apis/scheduling.run.ai/v2alpha2"
PODGROUP_API = {Adapter.VOLCANO: VOLCANO_PODGROUPS, Adapter.KAI: KAI_PODGROUPS}


@dataclass(frozen=True)
class Gang:
    """One gang of one run: its plan key, its object name on the platform and its sizes."""

    key: str
    name: str
    replicas: int
    min_available: int


def gang_name(key: str, run_id: str) -> str:
    """``qc-train-2x8g-g004-1a2b3`` (a label value: at most 63 characters)."""
    digest = hashlib.md5(run_id.encode(), usedforsecurity=False).hexdigest()[:5]
    return f"{key}-{digest}"


def gang_of(plan, test_class: str, item: str | None, run_id: str) -> Gang | None:
    """The gang of the class's wave item ``item`` (None for a workload of one pod or an unknown item)."""
    if not item:
        return None
    from gpupoc.plan.waves import class_items

    found = next((i for i in class_items(plan, test_class) if i.name == item), None)
    if found is None or found.gang is None:
        return None
    return Gang(found.gang, gang_name(found.gang, run_id), found.replicas, found.min_available)


def gang_labels(adapter: Adapter, gang: Gang, queue: str | None) -> tuple[dict[str, str], dict[str, str]]:
    """(labels, annotations) that put a pod into ``gang`` under ``adapter``."""
    labels, annotations = {L.GANG: gang.name}, {}
    if adapter is Adapter.KUEUE:
        labels[KUEUE_GROUP] = gang.name
        annotations[KUEUE_GROUP_COUNT] = str(gang.replicas)
    elif adapter is Adapter.VOLCANO:
        annotations[VOLCANO_GROUP] = gang.name
    elif adapter is Adapter.KAI:
        annotations[KAI_GROUP] = gang.name
    return labels, annotations


def preemptibility(workload: Workload) -> str | None:
    """KAI's ``preemptible``/``non-preemptible`` when the plan says, else None (KAI decides by priority)."""
    if workload.preemptible is None:
        return None
    return "preemptible" if workload.preemptible else "non-preemptible"


def pod_group(adapter: Adapter, gang: Gang, workload: Workload, tenant: Tenant, *, priority_class: str,
              run_id: str, test_class: str) -> dict | None:
    """The PodGroup the pipeline creates for ``gang`` (None when the adapter groups pods by labels alone)."""
    if adapter not in PODGROUP_API:
        return None
    queue = tenant.queues.get(adapter.value)
    meta = {"name": gang.name, "namespace": tenant.namespace,
            "labels": {L.RUN_ID: L.safe_label_value(run_id), L.TEST_CLASS: L.safe_label_value(test_class),
                       L.TENANT: tenant.name, L.WORKLOAD: workload.name, L.GANG: gang.name},
            "annotations": {L.RUN_ID_RAW: run_id, L.GANG_KEY: gang.key}}
    spec: dict = {"minMember": gang.min_available, "queue": queue, "priorityClassName": priority_class}
    if adapter is Adapter.VOLCANO:
        spec["minResources"] = {GPU: str(gang.min_available * workload.gpus)}
        return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": meta, "spec": spec}
    mode = preemptibility(workload)
    if mode:
        spec["preemptibility"] = mode
    if queue:
        meta["labels"]["kai.scheduler/queue"] = queue
    return {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup", "metadata": meta, "spec": spec}


def pod_groups_path(adapter: Adapter, namespace: str) -> str | None:
    """Where the adapter's PodGroups of ``namespace`` are (None: the adapter has none)."""
    base = PODGROUP_API.get(adapter)
    return f"{base}/namespaces/{namespace}/podgroups" if base else None


def gang_objects(platform: Platform, gang: Gang, workload: Workload, tenant: Tenant, *, priority_class: str,
                 run_id: str, test_class: str, priority: int | None = None) -> list[tuple[str, dict]]:
    """(collection path, body) of every object the pipeline creates for ``gang`` before its pods, in order: the
    PodGroup of Volcano or KAI, or the Workload API's Workload and PodGroup; none where pods group by labels."""
    if platform.workload_api_gangs:
        labels = {L.RUN_ID: L.safe_label_value(run_id), L.TEST_CLASS: L.safe_label_value(test_class),
                  L.TENANT: tenant.name, L.WORKLOAD: workload.name, L.GANG: gang.name}
        ns = tenant.namespace
        prio = {"priority_class": priority_class, "priority": priority}  # the pods' (``priority``: its value)
        return [(workload_api.collection("Workload", ns),
                 workload_api.workload(gang.name, ns, gang.min_available, labels, **prio)),
                (workload_api.collection("PodGroup", ns),
                 workload_api.pod_group(gang.name, ns, gang.min_available, labels=labels, **prio))]
    body = pod_group(platform.adapter, gang, workload, tenant, priority_class=priority_class, run_id=run_id,
                     test_class=test_class)
    return [(pod_groups_path(platform.adapter, tenant.namespace) or "", body)] if body is not None else []
