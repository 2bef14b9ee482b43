"""The queue objects a cluster starts with, as each project's API returns them after defaulting: Kueue's
ResourceFlavors, ClusterQueues and LocalQueues; Volcano's Queues (with its ``default`` queue); KAI's Queues;
and the RBAC that lets tenants use them (PodGroups in their namespace, reading the cluster's queues)."""

from __future__ import annotations

from gpupoc.sim.cluster import GPU, TENANT_ROLE, ClusterState
from gpupoc.sim.modes import KAI_GROUP, VOLCANO_GROUP, SchedulerMode
from gpupoc.sim.queue_config import UNLIMITED, ClusterQueue, KaiQueue, VolcanoQueue

VOLCANO_DEFAULT_QUEUE = "default"
QUEUE_READER = "gpupoc-tenant-queues"
TENANT_GROUP_VERBS = ["get", "list", "watch", "create", "delete", "patch", "update"]


def create_queues(state: ClusterState) -> None:
    """Store the queues of the cluster's scheduler mode (Kueue's objects in kube and kueue modes)."""
    mode = state.mode
    if mode in (SchedulerMode.KUBE, SchedulerMode.KUEUE):
        _kueue(state)
    elif mode == SchedulerMode.VOLCANO:
        names = {q.name for q in state.config.volcano.queues}
        if VOLCANO_DEFAULT_QUEUE not in names:
            state.store.create("queues", volcano_queue(VolcanoQueue(name=VOLCANO_DEFAULT_QUEUE)))
        for q in state.config.volcano.queues:
            state.store.create("queues", volcano_queue(q))
    elif mode == SchedulerMode.KAI:
        children: dict[str, list[str]] = {}
        for q in state.config.kai.queues:
            if q.parent:
                children.setdefault(q.parent, []).append(q.name)
        for q in state.config.kai.queues:
            state.store.create("queues", kai_queue(q, children.get(q.name, [])))
    _tenant_access(state)


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


def _kueue(state: ClusterState) -> None:
    s, kq = state.store, state.config.kueue
    for flavor in sorted({cq.flavor for cq in kq.cluster_queues}):
        pool = state.config.pool(flavor)
        s.create("resourceflavors", {"metadata": {"name": flavor},
                                     "spec": {"nodeLabels": dict(pool.labels) if pool else {}}})
    for cq in kq.cluster_queues:
        s.create("clusterqueues", cluster_queue(cq))
    for lq in kq.local_queues:
        s.create("localqueues", {"metadata": {"name": lq.name, "namespace": lq.namespace},
                                 "spec": {"clusterQueue": lq.cluster_queue, "stopPolicy": "None"},
                                 "status": {"pendingWorkloads": 0, "reservingWorkloads": 0, "admittedWorkloads": 0}})


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


def _tenant_access(state: ClusterState) -> None:
    """Tenants create PodGroups in their namespace and read the cluster's queues (Volcano and KAI modes)."""
    group = {SchedulerMode.VOLCANO: VOLCANO_GROUP, SchedulerMode.KAI: KAI_GROUP}.get(state.mode)
    if group is None:
        return
    s = state.store
    for t in state.config.tenants:
        role = s.get("roles", t.namespace, TENANT_ROLE)
        if role is not None:
            role["rules"].append({"apiGroups": [group], "resources": ["podgroups"], "verbs": list(TENANT_GROUP_VERBS)})
            s.update("roles", role)
    s.create("clusterroles", {"metadata": {"name": QUEUE_READER},
                              "rules": [{"apiGroups": [group], "resources": ["queues"],
                                         "verbs": ["get", "list", "watch"]}]})
    s.create("clusterrolebindings", {
        "metadata": {"name": QUEUE_READER},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": QUEUE_READER},
        "subjects": [{"kind": "ServiceAccount", "name": t.service_account, "namespace": t.namespace}
                     for t in state.config.tenants],
    })


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _quantity(value: float) -> str:
    return str(_number(value))
