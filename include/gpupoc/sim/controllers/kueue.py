"""Kueue emulation: LocalQueue -> ClusterQueue quotas in cohorts, admission gate, Workloads, visibility.

How the API server calls it (contract; kube and kueue modes only, inert otherwise), through the admission
plug-in ``KueueWebhook`` that ``kueue_for`` registers in ``state.hooks.admission``:
1. ``on_pod_create(state, pod)`` before a new pod is stored. A pod labelled ``kueue.x-k8s.io/queue-name``
   gets label ``kueue.x-k8s.io/managed=true`` and scheduling gates ``kueue.x-k8s.io/admission`` and
   ``kueue.x-k8s.io/topology`` (other gates are kept), as Kueue's pod webhook does, whether or not the
   LocalQueue exists. Never raises.
2. ``after_pod_created(state, pod)`` right after the pod is stored: creates its Workload, or, for a pod of a
   pod group (label ``kueue.x-k8s.io/pod-group-name``, annotation ``kueue.x-k8s.io/pod-group-total-count``),
   the group's Workload once all its pods exist (``kueue_groups``). Optional: pods marked in step 1 whose
   Workload is missing get it on the next ``kueue_pass`` anyway.
3. ``kueue_pass(state)`` from the controller loop: finishes Workloads of finished pods, deletes those of
   deleted pods (owner garbage collection), runs an admission cycle (``kueue_admit``: cohorts, borrowing
   and lending limits, preemption policies, fair sharing) and keeps ClusterQueue and LocalQueue status
   current.
4. ``pending_workloads(state, cluster_queue=..., namespace=..., local_queue=...)``: the visibility API's
   items, in queue order (priority, then creation), with ``positionInClusterQueue`` and
   ``positionInLocalQueue``.
Admission removes only Kueue's gates: a pod also gated by another controller stays unscheduled until that
gate goes too. ``kueue_for`` also subscribes ``kueue_evict.adopt`` to ``state.hooks.replacing``: a
replacement pod takes over the Workload of the pod it replaces.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.sim import clock
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers.kueue_admit import admit_cycle, update_status
from gpupoc.sim.controllers.kueue_evict import adopt
from gpupoc.sim.controllers.kueue_groups import POD_CONTROLLER, GroupComposer
from gpupoc.sim.controllers.kueue_types import (  # noqa: F401  (re-exported: the module's API)
    ADMISSION_GATE, COMPONENT, GPU, KUEUE_GATES, JOB_UID_LABEL, MANAGED_LABEL, POD_SET, QUEUE_LABEL, Entry, Key,
    pending_message, podset_gpus, set_condition, template_spec, workload_name)
from gpupoc.sim.controllers.scheduling import priority_of
from gpupoc.sim.events import NORMAL
from gpupoc.sim.store import Change, Conflict

log = logging.getLogger(__name__)

@dataclass
class Kueue:
    """Queue manager state for one cluster (see module docstring)."""

    state: ClusterState
    entries: dict[Key, Entry] = field(default_factory=dict)  # workload key -> entry
    by_pod: dict[Key, Key] = field(default_factory=dict)  # pod key -> workload key
    to_create: list[Key] = field(default_factory=list)  # managed pods awaiting their Workload
    dirty: bool = True
    _seq: int = 0
    _specs: dict[tuple, dict | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.groups = GroupComposer(self.state, self)
        for wl in self.state.store.list("workloads"):
            self._index(wl)
        self.state.store.add_listener(self._on_change)

    @property
    def active(self) -> bool:
        return self.state.mode in (SchedulerMode.KUBE, SchedulerMode.KUEUE)

    def _on_change(self, change: Change) -> None:
        if change.resource in ("clusterqueues", "localqueues", "resourceflavors"):
            meta = change.obj["metadata"]
            key = (change.resource, meta.get("namespace", ""), meta["name"])
            spec = None if change.type == "DELETED" else change.obj.get("spec")
            if self._specs.get(key) != spec:  # status-only updates (ours) change nothing
                self._specs[key] = spec
                self.dirty = True
        elif change.resource == "workloads":
            meta = change.obj["metadata"]
            key = (meta.get("namespace", ""), meta["name"])
            if change.type == "DELETED":
                self.dirty = True
            elif change.type == "ADDED" and key not in self.entries:  # created through the API
                self._index(change.obj)
                self.dirty = True
        elif change.resource == "pods":
            meta = change.obj["metadata"]
            key = (meta.get("namespace", ""), meta["name"])
            if key in self.by_pod and (change.type == "DELETED"
                                       or change.obj.get("status", {}).get("phase") in ("Succeeded", "Failed")):
                self.dirty = True

    def _index(self, wl: dict) -> Entry:
        meta, spec = wl["metadata"], wl.get("spec") or {}
        pods = [(meta["namespace"], o.get("name", "")) for o in meta.get("ownerReferences") or []
                if o.get("kind") == "Pod"]
        conds = {c["type"]: c["status"] for c in wl.get("status", {}).get("conditions") or []}
        podsets = spec.get("podSets") or []
        self._seq += 1
        entry = Entry((meta["namespace"], meta["name"]), pods, spec.get("queueName", ""),
                      sum(podset_gpus(ps) for ps in podsets), int(spec.get("priority") or 0),
                      meta.get("creationTimestamp", ""), self._seq,
                      admitted=conds.get("QuotaReserved") == "True", finished=conds.get("Finished") == "True",
                      pod_set=(podsets[0].get("name") if podsets else POD_SET) or POD_SET)
        self.entries[entry.key] = entry
        for p in pods:
            self.by_pod[p] = entry.key
        return entry

    # -- workload creation --------------------------------------------------------------------------
    def create_workload(self, pod: dict) -> dict | None:
        """The Workload of a single pod (a pod of a group waits for its group, ``kueue_groups``)."""
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        if key in self.by_pod:
            return None
        if self.groups.claims(pod):
            return self.groups.add(pod)
        wl = self.workload_body(workload_name(meta["name"], meta.get("uid", "")), [pod],
                                {meta.get("uid", "")}, [(POD_SET, [pod])])
        stored = self.store_workload(wl)
        if stored is not None:  # as real Kueue's pod controller says it (v0.17.0, test_real_kueue.py)
            self.state.events.record(pod, "CreatedWorkload", f"Created Workload: {key[0]}/{wl['metadata']['name']}",
                                     NORMAL, component=POD_CONTROLLER)
        return stored

    def workload_body(self, name: str, owners: list[dict], job_uid: set[str],
                      podsets: list[tuple[str, list[dict]]]) -> dict:
        first = owners[0]
        meta, spec = first["metadata"], first.get("spec", {})
        queue = (meta.get("labels") or {}).get(QUEUE_LABEL, "")
        return {
            "metadata": {
                "name": name, "namespace": meta.get("namespace", ""),
                "labels": {JOB_UID_LABEL: sorted(job_uid)[0]} if len(job_uid) == 1 else {},
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": o["metadata"]["name"],
                                     "uid": o["metadata"].get("uid", ""), "controller": len(owners) == 1,
                                     "blockOwnerDeletion": True} for o in owners],
                "finalizers": ["kueue.x-k8s.io/resource-in-use"],
                "generation": 1,
            },
            "spec": {
                "active": True,
                "queueName": queue,
                "priority": max(priority_of(o) for o in owners),
                "priorityClassName": spec.get("priorityClassName", ""),
                "priorityClassSource": "scheduling.k8s.io/priorityclass" if spec.get("priorityClassName") else "",
                "podSets": [{"name": name_, "count": len(pods), "template": {
                    "metadata": {"labels": dict(pods[0]["metadata"].get("labels") or {})},
                    "spec": template_spec(pods[0].get("spec", {}))}} for name_, pods in podsets],
            },
            "status": {"conditions": []},
        }

    def store_workload(self, wl: dict) -> dict | None:
        ns, queue = wl["metadata"]["namespace"], wl["spec"]["queueName"]
        if self.state.store.get("localqueues", ns, queue) is None:
            set_condition(wl, "QuotaReserved", "False", "Inadmissible", f"LocalQueue {queue} doesn't exist")
        try:
            self.state.store.create("workloads", wl)
        except Conflict:
            return None
        self._index(wl)
        self.dirty = True
        return wl

    # -- the pass -----------------------------------------------------------------------------------
    def run_pass(self) -> int:
        """One reconcile; returns how many Workloads were admitted."""
        if not self.active:
            return 0
        store = self.state.store
        while self.to_create:
            ns, name = self.to_create.pop(0)
            pod = store.get("pods", ns, name)
            if pod is not None and (ns, name) not in self.by_pod:
                self.create_workload(pod)
        self.groups.compose()
        if not self.dirty:
            return 0
        self.dirty = False
        self._finish()
        admitted = admit_cycle(self.state, self)
        update_status(self.state, self)
        return admitted

    def _finish(self) -> None:
        store = self.state.store
        for entry in list(self.entries.values()):
            wl = store.get("workloads", *entry.key)
            if wl is None:
                self._drop(entry)
                continue
            if not entry.pods:
                continue  # a Workload made through the API: nothing owns it here
            pods = [store.get("pods", *k) for k in entry.pods]
            live = [p for p in pods if p is not None]
            if not live:  # owners gone: the garbage collector deletes the Workload
                store.delete("workloads", *entry.key)
                self._drop(entry)
                continue
            if entry.finished:
                continue
            phases = [p.get("status", {}).get("phase") for p in live]
            if len(live) == len(pods) and all(ph in ("Succeeded", "Failed") for ph in phases):
                ok = all(ph == "Succeeded" for ph in phases)
                failed = next((p for p in live if p.get("status", {}).get("phase") == "Failed"), None)
                message = "Job finished successfully" if ok else ((failed or {}).get("status", {}).get("message")
                                                                  or "Job failed")
                set_condition(wl, "Finished", "True", "Succeeded" if ok else "Failed", message)
                store.update("workloads", wl)
                entry.finished = True

    def _drop(self, entry: Entry) -> None:
        self.entries.pop(entry.key, None)
        for p in entry.pods:
            if self.by_pod.get(p) == entry.key:
                del self.by_pod[p]

    def local_queues(self) -> dict[Key, str]:
        """(namespace, LocalQueue) -> ClusterQueue."""
        return {(lq["metadata"]["namespace"], lq["metadata"]["name"]): lq.get("spec", {}).get("clusterQueue", "")
                for lq in self.state.store.list("localqueues")}

    def ordered(self, cq_name: str, queues: dict[Key, str]) -> list[Entry]:
        """The ClusterQueue's pending Workloads in queue order (priority desc, then creation)."""
        waiting = [e for e in self.entries.values()
                   if not e.admitted and not e.finished and queues.get((e.key[0], e.local_queue)) == cq_name]
        waiting.sort(key=lambda e: (-e.priority, e.created, e.seq))
        return waiting

    def usage(self, cq_name: str, queues: dict[Key, str]) -> int:
        return sum(e.gpus for e in self.entries.values()
                   if e.admitted and not e.finished and queues.get((e.key[0], e.local_queue)) == cq_name)

    def admit(self, entry: Entry, wl: dict, cq: str, flavor: str) -> None:
        """Reserve quota and admit: conditions, events, the pods ungated and pinned to the flavor's nodes."""
        store = self.state.store
        wl["status"]["admission"] = {"clusterQueue": cq, "podSetAssignments": [{
            "name": ps.get("name", POD_SET), "flavors": {GPU: flavor},
            "resourceUsage": {GPU: str(podset_gpus(ps))}, "count": int(ps.get("count", 1))}
            for ps in wl["spec"].get("podSets") or []]}
        set_condition(wl, "QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {cq}")
        set_condition(wl, "Admitted", "True", "Admitted", "The workload is admitted")
        for cond in list(wl["status"].get("conditions") or []):  # a requeued Workload keeps its eviction as history
            if cond["type"] in ("Evicted", "Preempted") and cond["status"] == "True":
                set_condition(wl, cond["type"], "False", "QuotaReserved", "Previously: " + cond["message"])
        store.update("workloads", wl)
        entry.admitted = True
        entry.admitted_at = clock.now().timestamp()
        self.state.events.record(wl, "QuotaReserved", f"Quota reserved in ClusterQueue {cq}, wait time since "
                                 f"queued was {_age(entry.created)}s", NORMAL, component=COMPONENT)
        self.state.events.record(wl, "Admitted", f"Admitted by ClusterQueue {cq}, wait time since reservation "
                                 "was 0s", NORMAL, component=COMPONENT)
        flavor_obj = store.get("resourceflavors", None, flavor)
        labels = (flavor_obj or {}).get("spec", {}).get("nodeLabels") or {}
        tolerations = (flavor_obj or {}).get("spec", {}).get("tolerations") or []
        for key in entry.pods:
            pod = store.get("pods", *key)
            if pod is None:
                continue
            spec = pod.setdefault("spec", {})
            gates = [g for g in spec.get("schedulingGates") or [] if g.get("name") not in KUEUE_GATES]
            if gates:
                spec["schedulingGates"] = gates
            else:
                spec.pop("schedulingGates", None)
            if labels:
                spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), **labels}
            # the flavor's tolerations too, as Kueue's podset.Merge does on admission (real Kueue v0.17.0)
            added = [t for t in tolerations if t not in (spec.get("tolerations") or [])]
            if added:
                spec["tolerations"] = [*(spec.get("tolerations") or []), *added]
            store.update("pods", pod)
            if len(entry.pods) == 1:  # jobframework's StartJob event on the job, here the pod itself
                self.state.events.record(pod, "Started", f"Admitted by clusterQueue {cq}", NORMAL,
                                         component=POD_CONTROLLER)
        self.state.kick()


def _age(created: str) -> int:
    try:
        return max(0, int((clock.now() - clock.parse(created)).total_seconds()))
    except ValueError:
        return 0


# -- module API used by the API server and the controller loop -------------------------------------
def kueue_for(state: ClusterState) -> Kueue:
    """The state's queue manager, created on first use with its hooks: the pod webhook as an admission
    plug-in, and the hand-over of a replaced pod's Workload."""
    if state.kueue is None:
        state.kueue = Kueue(state)
        state.hooks.admission.append(KueueWebhook(state))
        state.hooks.replacing.append(lambda old, pod: adopt(state, old, pod))
    return state.kueue


@dataclass(frozen=True)
class KueueWebhook:
    """Kueue's pod webhook as an admission plug-in of the API server (``on_pod_create``, ``after_pod_created``)."""

    state: ClusterState

    def mutate(self, pod: dict) -> None:
        on_pod_create(self.state, pod)

    def created(self, pod: dict) -> None:
        after_pod_created(self.state, pod)


def on_pod_create(state: ClusterState, pod: dict) -> None:
    """Mutate a pod about to be stored the way Kueue's pod webhook does (see module docstring)."""
    try:
        if state.mode not in (SchedulerMode.KUBE, SchedulerMode.KUEUE):
            return
        meta = pod.setdefault("metadata", {})
        labels = meta.get("labels") or {}
        if not labels.get(QUEUE_LABEL):
            return
        meta["labels"] = {**labels, MANAGED_LABEL: "true"}
        spec = pod.setdefault("spec", {})
        gates = list(spec.get("schedulingGates") or [])
        for gate in KUEUE_GATES:
            if not any(g.get("name") == gate for g in gates):
                gates.append({"name": gate})
        spec["schedulingGates"] = gates
        kueue_for(state).to_create.append((meta.get("namespace", ""), meta.get("name", "")))
    except Exception:  # the API must still store the pod
        log.exception("kueue: could not prepare pod %s", pod.get("metadata", {}).get("name"))


def after_pod_created(state: ClusterState, pod: dict) -> None:
    """Create the Workload of a pod just stored (no-op for pods Kueue does not manage)."""
    try:
        if (pod.get("metadata", {}).get("labels") or {}).get(MANAGED_LABEL) == "true" and kueue_for(state).active:
            kueue_for(state).create_workload(pod)
            state.kick()
    except Exception:
        log.exception("kueue: could not create the Workload of pod %s", pod.get("metadata", {}).get("name"))


def kueue_pass(state: ClusterState) -> int:
    return kueue_for(state).run_pass()


def pending_workloads(state: ClusterState, cluster_queue: str | None = None, namespace: str | None = None,
                      local_queue: str | None = None) -> list[dict]:
    """Visibility API ``PendingWorkload`` items in queue order, filtered by ClusterQueue or LocalQueue."""
    kq = kueue_for(state)
    queues = kq.local_queues()
    names = [cluster_queue] if cluster_queue else sorted(set(queues.values()))
    if local_queue and namespace and not cluster_queue:
        names = [queues.get((namespace, local_queue), "")]
    items: list[dict] = []
    for cq in names:
        per_lq: dict[Key, int] = {}
        for pos, e in enumerate(kq.ordered(cq, queues)):
            lq_key = (e.key[0], e.local_queue)
            lq_pos = per_lq.get(lq_key, 0)
            per_lq[lq_key] = lq_pos + 1
            if namespace and e.key[0] != namespace:
                continue
            if local_queue and e.local_queue != local_queue:
                continue
            wl = state.store.get("workloads", *e.key) or {"metadata": {}}
            items.append({
                "metadata": {"name": e.key[1], "namespace": e.key[0], "creationTimestamp": e.created,
                             "ownerReferences": wl["metadata"].get("ownerReferences", [])},
                "priority": e.priority,
                "localQueueName": e.local_queue,
                "positionInClusterQueue": pos,
                "positionInLocalQueue": lq_pos,
            })
    return items
