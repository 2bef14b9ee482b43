"""Per scheduler adapter: the labels, annotations and scheduler name a platform needs on a pod.

- kube-scheduler: priorityClassName, nodeSelector/tolerations, GPU limits (all set by ``build_pod``).
- Kueue: label ``kueue.x-k8s.io/queue-name`` (the tenant's LocalQueue), optionally
  ``kueue.x-k8s.io/priority-class`` (a WorkloadPriorityClass).
- Volcano: ``schedulerName: volcano``, annotation ``scheduling.volcano.sh/queue-name``.
- KAI: ``schedulerName: kai-scheduler``, label ``kai.scheduler/queue``, and ``kai.scheduler/preemptibility``
  when the workload says.
A pod of a gang also gets the adapter's grouping (``gpupoc.podspec.gangs``).
"""

from __future__ import annotations

from kubernetes.client import V1Pod, V1PodSchedulingGroup

from gpupoc.plan.model import QUEUELESS, Adapter, Platform, Tenant, Workload
from gpupoc.podspec.gangs import KAI_PREEMPTIBILITY, Gang, gang_labels, preemptibility

KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY = "kueue.x-k8s.io/priority-class"
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"
KAI_QUEUE = "kai.scheduler/queue"


def decorate(pod: V1Pod, platform: Platform, tenant: Tenant, workload: Workload, *, priority_class: str,
             gang: Gang | None = None) -> V1Pod:
    """Add what ``platform.adapter`` needs to ``pod`` (mutated and returned), and its gang's grouping."""
    adapter = platform.adapter
    pod.spec.scheduler_name = platform.scheduler_name
    if gang is not None:
        labels, annotations = gang_labels(adapter, gang, tenant.queues.get(adapter.value))
        pod.metadata.labels.update(labels)
        pod.metadata.annotations.update(annotations)
        if platform.workload_api_gangs:  # the Workload API's PodGroup the pipeline made (``gangs.gang_objects``)
            pod.spec.scheduling_group = V1PodSchedulingGroup(pod_group_name=gang.name)
    if adapter in QUEUELESS:  # kube-scheduler, HAMi (hami-scheduler takes GPU pods without a queue)
        return pod
    queue = tenant.queues.get(adapter.value)
    if not queue:  # load_plan rejects this; a hand-built plan may not have been checked
        raise ValueError(f"tenant {tenant.name!r} has no queue for adapter {adapter.value!r}; "
                         f"set tenants[].queues.{adapter.value}")
    if adapter is Adapter.KUEUE:
        pod.metadata.labels[KUEUE_QUEUE] = queue
        if platform.options.kueue_priority_label:
            pod.metadata.labels[KUEUE_PRIORITY] = priority_class
    elif adapter is Adapter.VOLCANO:
        pod.metadata.annotations[VOLCANO_QUEUE] = queue
    elif adapter is Adapter.KAI:
        pod.metadata.labels[KAI_QUEUE] = queue
        mode = preemptibility(workload)
        if mode:
            pod.metadata.labels[KAI_PREEMPTIBILITY] = mode
    return pod
