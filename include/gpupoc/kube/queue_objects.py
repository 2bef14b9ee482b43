"""The queue objects each scheduler's API returns for a declared queue, after defaulting: Kueue's ClusterQueues,
Volcano's Queues and KAI's Queues. ``gpupoc cluster manifests`` renders them for a real cluster, the preflight
compares a cluster's queues with them, and the simulated cluster stores them at start."""

from __future__ import annotations

from gpupoc.kube.queues import UNLIMITED, ClusterQueue, KaiQueue, VolcanoQueue
from gpupoc.kube.resources import GPU

VOLCANO_DEFAULT_QUEUE = "default"  # the queue Volcano creates itself


def cluster_queue(cq: ClusterQueue) -> dict:
    res: dict = {"name": GPU, "nominalQuota": str(cq.nominal_gpus)}
    if cq.borrowing_limit_gpus is not None:
        res["borrowingLimit"] = str(cq.borrowing_limit_gpus)
    if cq.lending_limit_gpus is not None:
        res["lendingLimit"] = str(cq.lending_limit_gpus)
    p = cq.preemption
    borrow: dict = {"policy": p.borrow_within_cohort}
    if p.max_priority_threshold is not None:
        borrow["maxPriorityThreshold"] = p.max_priority_threshold
    spec: dict = {
        "namespaceSelector": {},
        "queueingStrategy": cq.queueing_strategy,
        "resourceGroups": [{"coveredResources": [GPU], "flavors": [{"name": cq.flavor, "resources": [res]}]}],
        "preemption": {"withinClusterQueue": p.within_cluster_queue, "reclaimWithinCohort": p.reclaim_within_cohort,
                       "borrowWithinCohort": borrow},
        "flavorFungibility": {"whenCanBorrow": "Borrow", "whenCanPreempt": "TryNextFlavor"},
        "fairSharing": {"weight": _quantity(cq.fair_sharing_weight)},
        "stopPolicy": "None",
    }
    if cq.cohort:
        spec["cohort"] = cq.cohort
    usage = [{"name": cq.flavor, "resources": [{"name": GPU, "total": "0", "borrowed": "0"}]}]
    return {"metadata": {"name": cq.name}, "spec": spec,
            "status": {"pendingWorkloads": 0, "reservingWorkloads": 0, "admittedWorkloads": 0,
                       "flavorsReservation": usage, "flavorsUsage": usage}}


def volcano_queue(q: VolcanoQueue) -> dict:
    spec: dict = {"weight": q.weight, "reclaimable": q.reclaimable}
    if q.capability_gpus is not None:
        spec["capability"] = {GPU: str(q.capability_gpus)}
    if q.deserved_gpus is not None:
        spec["deserved"] = {GPU: str(q.deserved_gpus)}
    if q.guarantee_gpus:
        spec["guarantee"] = {"resource": {GPU: str(q.guarantee_gpus)}}
    if q.priority:
        spec["priority"] = q.priority
    return {"metadata": {"name": q.name}, "spec": spec,
            "status": {"state": "Open", "allocated": {GPU: "0"}, "pending": 0, "running": 0, "inqueue": 0,
                       "unknown": 0, "completed": 0}}


def kai_queue(q: KaiQueue, children: list[str]) -> dict:
    unlimited = {"quota": UNLIMITED, "overQuotaWeight": 1, "limit": UNLIMITED}
    spec: dict = {"priority": q.priority, "resources": {
        "gpu": {"quota": _number(q.quota_gpus), "overQuotaWeight": _number(q.over_quota_weight),
                "limit": _number(q.limit_gpus)},
        "cpu": dict(unlimited), "memory": dict(unlimited)}}
    if q.display_name:
        spec["displayName"] = q.display_name
    if q.parent:
        spec["parentQueue"] = q.parent
    status: dict = {"allocated": {GPU: "0"}, "allocatedNonPreemptible": {GPU: "0"}, "requested": {GPU: "0"}}
    if children:
        status["childQueues"] = sorted(children)
    return {"metadata": {"name": q.name}, "spec": spec, "status": status}


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _quantity(value: float) -> str:
    return str(_number(value))
