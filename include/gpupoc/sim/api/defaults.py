"""What the API server and the schedulers' webhooks fill in on an object created through the API, so an object
applied with ``kubectl apply`` looks as it would on a real cluster before the controllers see it.

- Namespace: the ``kubernetes.io/metadata.name`` label (the NamespaceDefaultLabelName feature, on since 1.22),
  the ``kubernetes`` finalizer and ``status.phase: Active``.
- Kueue ClusterQueue (``apis/kueue/v1beta1/clusterqueue_types.go`` kubebuilder defaults): ``queueingStrategy``
  BestEffortFIFO, ``stopPolicy`` None, ``preemption`` Never everywhere, ``flavorFungibility`` Borrow /
  TryNextFlavor; an empty status. LocalQueue: ``stopPolicy`` None, empty counters.
- Volcano Queue (``volcano.sh/apis`` scheduling/v1beta1): ``weight`` 1, ``reclaimable`` true, state Open.
- KAI Queue (``pkg/apis/scheduling/v2``): nothing allocated yet.
The controllers keep these statuses current from then on.
"""

from __future__ import annotations

from typing import Callable

from gpupoc.kube.resources import GPU
from gpupoc.sim.api import service_defaults
from gpupoc.sim.cluster import ClusterState


def _namespace(state: ClusterState, obj: dict) -> None:
    meta = obj.setdefault("metadata", {})
    meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    obj["status"] = {"phase": "Active"}


def _flavors(spec: dict) -> list[str]:
    return [f.get("name") for g in spec.get("resourceGroups") or [] for f in g.get("flavors") or [] if f.get("name")]


def _cluster_queue(state: ClusterState, obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("queueingStrategy", "BestEffortFIFO")
    spec.setdefault("stopPolicy", "None")
    pre = spec.setdefault("preemption", {})
    pre.setdefault("withinClusterQueue", "Never")
    pre.setdefault("reclaimWithinCohort", "Never")
    pre.setdefault("borrowWithinCohort", {}).setdefault("policy", "Never")
    fung = spec.setdefault("flavorFungibility", {})
    fung.setdefault("whenCanBorrow", "Borrow")
    fung.setdefault("whenCanPreempt", "TryNextFlavor")
    usage = [{"name": f, "resources": [{"name": GPU, "total": "0", "borrowed": "0"}]} for f in _flavors(spec)]
    obj["status"] = {"pendingWorkloads": 0, "reservingWorkloads": 0, "admittedWorkloads": 0,
                     "flavorsReservation": usage, "flavorsUsage": [dict(u) for u in usage]}


def _local_queue(state: ClusterState, obj: dict) -> None:
    obj.setdefault("spec", {}).setdefault("stopPolicy", "None")
    obj["status"] = {"pendingWorkloads": 0, "reservingWorkloads": 0, "admittedWorkloads": 0}


def _queue(state: ClusterState, obj: dict) -> None:
    """Volcano's or KAI's Queue, whichever the cluster's scheduler mode serves as ``queues``."""
    from gpupoc.kube.schedulers import SchedulerMode

    if state.mode == SchedulerMode.VOLCANO:
        spec = obj.setdefault("spec", {})
        spec.setdefault("weight", 1)
        spec.setdefault("reclaimable", True)
        obj["status"] = {"state": "Open", "allocated": {GPU: "0"}, "pending": 0, "running": 0, "inqueue": 0,
                         "unknown": 0, "completed": 0}
    elif state.mode == SchedulerMode.KAI:
        obj["status"] = {"allocated": {GPU: "0"}, "allocatedNonPreemptible": {GPU: "0"}, "requested": {GPU: "0"}}


ON_CREATE: dict[str, Callable[[ClusterState, dict], None]] = {
    "namespaces": _namespace,
    "clusterqueues": _cluster_queue,
    "localqueues": _local_queue,
    "queues": _queue,
    **service_defaults.ON_CREATE,
}


def on_create(state: ClusterState, resource: str, obj: dict) -> None:
    """Fill in what the API server and webhooks default on ``resource`` (nothing for the others)."""
    hook = ON_CREATE.get(resource)
    if hook is not None:
        hook(state, obj)


def on_update(resource: str, old: dict, new: dict) -> None:
    """What the API server keeps or bumps on an update (generation, a Service's ClusterIP)."""
    service_defaults.on_update(resource, old, new)
