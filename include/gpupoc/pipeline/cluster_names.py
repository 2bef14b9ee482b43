"""What a platform message about a wave pod could refer to, gathered from the cluster and the pods themselves.

``gather_names`` lists the names of the cluster's objects once (nodes and their taint keys, priority classes,
ResourceQuotas, and the adapter's queues: Kueue ClusterQueues, LocalQueues, ResourceFlavors, Cohorts and
WorkloadPriorityClasses, Volcano or KAI Queues and PodGroups with their ``minMember``), the plan's queue names
beside them; ``names_from_pods`` adds what the wave's pods carry (their names and uids, their gangs and the
gangs' sizes). ``contexts`` gives each pod its ``ExplainContext``. Reads only; an API the platform does not
serve contributes nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable

from gpupoc.kube.schedulers import KUEUE_VERSION
from gpupoc.pipeline.k8s import KubeCaller
from gpupoc.pipeline.readable import ClusterNames, ExplainContext, PodRefs
from gpupoc.pipeline.wave import adapter_name
from gpupoc.podspec import labels as L
from gpupoc.podspec.gangs import KAI_PODGROUPS, VOLCANO_PODGROUPS

KUEUE = f"/apis/{KUEUE_VERSION}"
# Cluster-scoped and namespaced lists of queue-like objects, per adapter.
_QUEUES = {
    "kueue": ([f"{KUEUE}/clusterqueues", f"{KUEUE}/resourceflavors", "/apis/kueue.x-k8s.io/v1alpha1/cohorts",
               f"{KUEUE}/workloadpriorityclasses"], [f"{KUEUE}/namespaces/{{ns}}/localqueues"]),
    "volcano": ([f"{VOLCANO_PODGROUPS}/queues"], []),
    "kai": (["/apis/scheduling.run.ai/v2/queues"], []),
}
_PODGROUPS = {"volcano": VOLCANO_PODGROUPS, "kai": KAI_PODGROUPS}


def _items(caller: KubeCaller, path: str) -> list[dict]:
    r = caller.call("GET", path)
    return (r.body.get("items") or []) if r.ok and isinstance(r.body, dict) else []


def _name(obj: dict) -> str | None:
    return (obj.get("metadata") or {}).get("name")


def gather_names(caller: KubeCaller, plan, namespaces: Iterable[str]) -> ClusterNames:
    """The names of the cluster's nodes, taints, priority classes, quotas and queues (see module docstring)."""
    namespaces = sorted(set(namespaces))
    adapter = adapter_name(plan) if plan is not None else "kube-scheduler"
    nodes = _items(caller, "/api/v1/nodes")
    taints = {t.get("key") for n in nodes for t in (n.get("spec") or {}).get("taints") or []}
    cluster_wide, per_ns = _QUEUES.get(adapter, ([], []))
    queues = [_name(o) for p in cluster_wide for o in _items(caller, p)]
    queues += [_name(o) for ns in namespaces for p in [*per_ns, "/api/v1/namespaces/{ns}/resourcequotas"]
               for o in _items(caller, p.format(ns=ns))]
    if plan is not None:
        queues += [str(getattr(q, "value", q)) for t in plan.tenants for q in (t.queues or {}).values() if q]
    groups: list[dict] = []
    if adapter in _PODGROUPS:
        groups = [g for ns in namespaces for g in _items(caller, f"{_PODGROUPS[adapter]}/namespaces/{ns}/podgroups")]
    sizes: dict[str, set[int]] = {}
    for g in groups:
        minimum = (g.get("spec") or {}).get("minMember")
        if isinstance(minimum, int):
            sizes.setdefault(_name(g) or "", set()).add(minimum)
    return ClusterNames(
        queues=_lower(queues), priority_classes=_lower(_name(o) for o in _items(
            caller, "/apis/scheduling.k8s.io/v1/priorityclasses")),
        pod_groups=_lower(_name(g) for g in groups), nodes=_lower(_name(n) for n in nodes), taints=_lower(taints),
        gang_sizes={g.lower(): frozenset(s) for g, s in sizes.items() if g})


def _lower(values: Iterable[str | None]) -> frozenset[str]:
    return frozenset(v.lower() for v in values if v)


def names_from_pods(pods: Iterable[dict]) -> ClusterNames:
    """The pods' names and uids (the workloads one may wait behind), their pod groups and gang sizes."""
    pods = list(pods)
    items = {(PodRefs.of_pod(p).gang, (p["metadata"].get("annotations") or {}).get(L.ITEM) or p["metadata"].get("name"))
             for p in pods}
    members = Counter(gang for gang, _ in items)  # a resubmitted member is the same member
    return ClusterNames(
        workloads=_lower(x for p in pods for x in (p["metadata"].get("name"), p["metadata"].get("uid"))),
        pod_groups=_lower(g for g in members if g),
        gang_sizes={g.lower(): frozenset({n}) for g, n in members.items() if g})


def contexts(pods: Iterable[dict], names: ClusterNames) -> Callable[[str, str], ExplainContext]:
    """(namespace, pod) -> its ``ExplainContext``. A pod not among ``pods`` asks for GPUs and a pod slot only."""
    pods = list(pods)
    names = names.merged(names_from_pods(pods))
    refs = {(p["metadata"]["namespace"], p["metadata"]["name"]): PodRefs.of_pod(p) for p in pods}

    def context(namespace: str, pod: str) -> ExplainContext:
        return ExplainContext(refs.get((namespace, pod)) or PodRefs(namespace, pod), names)

    return context
