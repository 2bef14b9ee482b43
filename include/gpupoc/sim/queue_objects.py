"""The queue objects a simulated cluster starts with: Kueue's ResourceFlavors, ClusterQueues and LocalQueues;
Volcano's Queues (with its ``default`` queue); KAI's Queues (each built by ``gpupoc.kube.queue_objects``, as a
real cluster's manifests are); and the RBAC that lets tenants use them (PodGroups in their namespace, reading
the cluster's queues)."""

from __future__ import annotations

from gpupoc.kube.labels import QUEUE_READER, TENANT_ROLE
from gpupoc.kube.queue_objects import VOLCANO_DEFAULT_QUEUE, cluster_queue, kai_queue, volcano_queue
from gpupoc.kube.queues import VolcanoQueue
from gpupoc.kube.schedulers import KAI_GROUP, VOLCANO_GROUP, SchedulerMode
from gpupoc.sim.cluster import ClusterState

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
