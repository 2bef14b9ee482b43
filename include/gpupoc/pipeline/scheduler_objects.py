"""The scheduler's own objects, joined to each pod: where Kueue, Volcano and KAI say why a pod waits.

A pod's own condition often says only that it waits (Kueue's pods carry ``SchedulingGated`` until their
Workload is admitted; Volcano's a gang member that fit reads "can possibly be assigned to <node>"). The
reason a user can read lives in the object the scheduler keeps for the workload:

- Kueue: the Workload owning the pod (``ownerReferences``), its ``QuotaReserved=False`` condition message
  ("couldn't assign flavors to pod set main: insufficient unused quota ..."), and the visibility API's
  ``positionInClusterQueue`` of the pod's LocalQueue;
- Volcano: the PodGroup named by the pod's ``scheduling.k8s.io/group-name`` annotation, its
  ``Unschedulable`` condition (``NotEnoughResources``/``NotEnoughTasks``) and the events on it ("queue resource
  quota insufficient: insufficient nvidia.com/gpu");
- KAI: the PodGroup named by ``pod-group-name``, its ``status.schedulingConditions`` (message and
  ``reasons[]``: ``OverLimit``, ``NonPreemptibleOverQuota``, ``PodSchedulingErrors``) and its events.

``explain`` is the observer's hook: one call per snapshot fills each observation's ``scheduler_said`` (every
text of the scheduler's objects about the pod, in the order a user reads them, not judged: the reconstruction
judges each once, ``congestion.reconstruct``), its queue position and its gang. Reads only; a resource the
platform does not serve contributes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from gpupoc.kube.schedulers import KUEUE_VERSION
from gpupoc.pipeline.k8s import KubeCaller
from gpupoc.pipeline.timelines import Observation, Said
from gpupoc.pipeline.workload_outcome import Statement, group_event_statements, named_pod
from gpupoc.podspec import labels as L
from gpupoc.podspec.gangs import KAI_GROUP, KAI_PODGROUPS, VOLCANO_GROUP, VOLCANO_PODGROUPS

KUEUE_VISIBILITY = "/apis/visibility.kueue.x-k8s.io/v1beta2"
KUEUE_API = f"/apis/{KUEUE_VERSION}"
VOLCANO_GROUP_KEYS = (VOLCANO_GROUP, "scheduling.volcano.sh/group-name")
Key = tuple[str, str]


@dataclass(frozen=True)
class PodExplanation:
    """What the scheduler's own objects say about one pod: its texts (``Observation.scheduler_said``) and its
    queue position."""

    said: tuple[Said, ...] = ()
    position: int | None = None


def _adapter(plan) -> str:
    a = plan.platform.adapter
    return getattr(a, "value", str(a))


def _list(caller: KubeCaller, path: str) -> list[dict]:
    r = caller.call("GET", path)
    return (r.body.get("items") or []) if r.ok and isinstance(r.body, dict) else []


def owned_pods(obj: dict) -> list[str]:
    """Names of the pods an object's ``ownerReferences`` name."""
    return [ref.get("name") for ref in (obj.get("metadata") or {}).get("ownerReferences") or []
            if ref.get("kind") == "Pod"]


# ---- Kueue ----
def kueue_queue(plan, namespace: str) -> str | None:
    """The LocalQueue the plan gives the tenant of ``namespace``."""
    tenant = next((t for t in plan.tenants if t.namespace == namespace), None)
    lq = (tenant.queues or {}).get("kueue") if tenant else None
    return getattr(lq, "value", lq)


def kueue_cluster_queues(caller: KubeCaller, plan) -> dict[str, str]:
    """namespace -> the ClusterQueue its tenant's LocalQueue feeds (``spec.clusterQueue``), as the cluster
    says; a LocalQueue that cannot be read is left out (its tenant's preemptions are then told apart by
    LocalQueue)."""
    out = {}
    for t in plan.tenants:
        lq = kueue_queue(plan, t.namespace)
        if not lq:
            continue
        r = caller.call("GET", f"{KUEUE_API}/namespaces/{t.namespace}/localqueues/{lq}")
        cq = ((r.body or {}).get("spec") or {}).get("clusterQueue") if r.ok and isinstance(r.body, dict) else None
        if cq:
            out[t.namespace] = cq
    return out


def priority_queues(plan, cluster_queues: dict[str, str] | None = None) -> dict[str, str]:
    """namespace -> the queue inside which its workloads' priorities are compared: under Kueue the ClusterQueue
    of its LocalQueue (``cluster_queues``, read from the cluster by ``kueue_cluster_queues``), else the
    LocalQueue itself; under Volcano and KAI the tenant's queue (cluster-scoped: tenants naming one share it);
    otherwise the tenant."""
    adapter = _adapter(plan)
    out = {}
    for t in plan.tenants:
        q = (t.queues or {}).get(adapter) if adapter in ("kueue", "volcano", "kai") else None
        q = getattr(q, "value", q)
        if adapter == "kueue":
            out[t.namespace] = f"ClusterQueue {cluster_queues[t.namespace]}" if t.namespace in (cluster_queues or {}) \
                else (f"LocalQueue {t.namespace}/{q}" if q else f"tenant {t.name}")
        else:
            out[t.namespace] = f"queue {q}" if q else f"tenant {t.name}"
    return out


def kueue_workloads(caller: KubeCaller, namespaces: Iterable[str]) -> list[dict]:
    out: list[dict] = []
    for ns in sorted(set(namespaces)):
        out += _list(caller, f"{KUEUE_API}/namespaces/{ns}/workloads")
    return out


def kueue_view(caller: KubeCaller, plan, namespaces: Iterable[str]) -> dict[Key, PodExplanation]:
    """(namespace, pod) -> the ``QuotaReserved=False`` message of its Workload and its position."""
    positions: dict[Key, int | None] = {}
    for ns in sorted(set(namespaces)):
        lq = kueue_queue(plan, ns)
        if not lq:
            continue
        for it in _list(caller, f"{KUEUE_VISIBILITY}/namespaces/{ns}/localqueues/{lq}/pendingworkloads"):
            for name in owned_pods(it):
                positions[(ns, name)] = it.get("positionInClusterQueue")
    out: dict[Key, PodExplanation] = {}
    for wl in kueue_workloads(caller, namespaces):
        ns = wl["metadata"]["namespace"]
        cond = next((c for c in (wl.get("status") or {}).get("conditions") or []
                     if c.get("type") == "QuotaReserved" and c.get("status") == "False"), None)
        for name in owned_pods(wl):
            out[(ns, name)] = PodExplanation(
                _said([(cond.get("reason"), cond.get("message"),
                        f"Workload {ns}/{wl['metadata']['name']} condition QuotaReserved")] if cond else []),
                positions.get((ns, name)))
    for key, pos in positions.items():
        out.setdefault(key, PodExplanation(position=pos))
    return out


# ---- Volcano and KAI ----
def _group_of(pod: dict, keys: tuple[str, ...]) -> str | None:
    ann = (pod.get("metadata") or {}).get("annotations") or {}
    return next((ann[k] for k in keys if ann.get(k)), None)


def podgroup_events(events: list[dict]) -> dict[Key, list[dict]]:
    """(namespace, PodGroup) -> the events about it, newest first."""
    out: dict[Key, list[dict]] = {}
    for e in events:
        inv = e.get("involvedObject") or e.get("regarding") or {}
        if inv.get("kind") != "PodGroup":
            continue
        ns = inv.get("namespace") or (e.get("metadata") or {}).get("namespace")
        out.setdefault((ns, inv.get("name")), []).append(e)
    for evs in out.values():
        evs.sort(key=lambda e: e.get("eventTime") or e.get("lastTimestamp") or e.get("firstTimestamp") or "",
                 reverse=True)
    return out


def _said(candidates: list[tuple[str | None, str | None, str]]) -> tuple[Said, ...]:
    """The texts that say something (an empty message says nothing), in the order given."""
    return tuple((r, m, src) for r, m, src in candidates if m)


def _volcano_texts(pg: dict, events: list[dict]) -> list[tuple[str | None, str | None, str]]:
    name = f"{pg['metadata']['namespace']}/{pg['metadata']['name']}"
    status = pg.get("status") or {}
    phase = status.get("phase") or "Pending"
    conditions = [(c.get("reason"), c.get("message"), f"PodGroup {name} ({phase}) condition Unschedulable")
                  for c in status.get("conditions") or []
                  if c.get("type") == "Unschedulable" and str(c.get("status")) == "True"]
    said = [(e.get("reason"), e.get("message"), f"PodGroup {name} ({phase}) event {e.get('reason')}")
            for e in events if e.get("reason") == "Unschedulable"]  # newest first
    # not enqueued yet (Pending): the enqueue events say which quota or resource; else the gang condition
    return said + conditions if phase == "Pending" else conditions + said


def _kai_texts(pg: dict, events: list[dict]) -> list[tuple[str | None, str | None, str]]:
    name = f"{pg['metadata']['namespace']}/{pg['metadata']['name']}"
    out = []
    for c in reversed((pg.get("status") or {}).get("schedulingConditions") or []):
        for r in c.get("reasons") or []:
            out.append((r.get("reason"), r.get("message"), f"PodGroup {name} schedulingConditions reasons"))
        out.append((c.get("reason"), c.get("message"), f"PodGroup {name} schedulingConditions {c.get('type')}"))
    for e in events:
        if e.get("reason") in ("Unschedulable", "NotReady"):
            out.append((e.get("reason"), e.get("message"), f"PodGroup {name} event {e.get('reason')}"))
    return out


def podgroup_view(caller: KubeCaller, adapter: str, namespaces: Iterable[str], pods: list[dict],
                  events: list[dict]) -> dict[Key, PodExplanation]:
    """(namespace, pod) -> the texts of the pod's PodGroup (Volcano or KAI)."""
    api, keys, texts = ((VOLCANO_PODGROUPS, VOLCANO_GROUP_KEYS, _volcano_texts) if adapter == "volcano"
                        else (KAI_PODGROUPS, (KAI_GROUP,), _kai_texts))
    groups: dict[Key, dict] = {}
    for ns in sorted(set(namespaces)):
        for pg in _list(caller, f"{api}/namespaces/{ns}/podgroups"):
            groups[(ns, pg["metadata"]["name"])] = pg
    on_groups = podgroup_events(events)
    said: dict[Key, PodExplanation] = {}
    out: dict[Key, PodExplanation] = {}
    for p in pods:
        m = p["metadata"]
        group = _group_of(p, keys)
        gkey = (m["namespace"], group)
        if group is None or gkey not in groups:
            continue
        if gkey not in said:
            said[gkey] = PodExplanation(_said(texts(groups[gkey], on_groups.get(gkey, []))))
        out[(m["namespace"], m["name"])] = said[gkey]
    return out


def scheduler_view(caller: KubeCaller, plan, namespaces: Iterable[str], pods: list[dict],
                   events: list[dict]) -> dict[Key, PodExplanation]:
    """(namespace, pod) -> what the plan's scheduler says about the pod in its own objects."""
    if plan is None:
        return {}
    adapter = _adapter(plan)
    if adapter == "kueue":
        return kueue_view(caller, plan, namespaces)
    if adapter in ("volcano", "kai"):
        return podgroup_view(caller, adapter, namespaces, pods, events)
    return {}


def explain(caller: KubeCaller, plan, namespaces: Iterable[str], pods: list[dict], events: list[dict],
            observations: list[Observation]) -> list[Observation]:
    """The observer's hook, once per snapshot: each observation with what its scheduler's own objects say
    (``scheduler_said``, not judged here), its queue position (Kueue) and its gang."""
    view = scheduler_view(caller, plan, namespaces, pods, events)
    gangs = {(p["metadata"]["namespace"], p["metadata"]["name"]): ((p["metadata"].get("labels") or {}).get(L.GANG))
             for p in pods}
    out = []
    for o in observations:
        key = (o.namespace, o.pod)
        ex = view.get(key)
        gang = gangs.get(key)
        if ex is None and gang is None:
            out.append(o)
            continue
        ex = ex or PodExplanation()
        out.append(replace(o, scheduler_said=ex.said, position=o.position if ex.position is None else ex.position,
                           gang=gang))
    return out


def podgroup_statements(events: list[dict]) -> dict[Key, list[Statement]]:
    """(namespace, pod) -> the PodGroup events that name the pod (``group_event_statements``)."""
    out: dict[Key, list[Statement]] = {}
    for e in events:
        key = named_pod(e)
        if key is not None and key not in out:
            out[key] = group_event_statements(events, *key)
    return out
