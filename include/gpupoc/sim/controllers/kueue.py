"""Kueue emulation: LocalQueue -> ClusterQueue nominal GPU quota, admission gate, Workloads, visibility.

How the API server calls it (contract):
1. ``on_pod_create(state, pod)`` before a new pod is stored. A pod labelled ``kueue.x-k8s.io/queue-name``
   gets label ``kueue.x-k8s.io/managed=true`` and scheduling gate ``kueue.x-k8s.io/admission`` (other gates
   are kept), as Kueue's pod webhook does, whether or not the LocalQueue exists. Never raises.
2. ``after_pod_created(state, pod)`` right after the pod is stored: creates its Workload. Optional: pods
   marked in step 1 whose Workload is missing get it on the next ``kueue_pass`` anyway.
3. ``kueue_pass(state)`` from the controller loop: finishes Workloads of finished pods, deletes those of
   deleted pods (owner garbage collection), admits pending Workloads per ClusterQueue in priority then
   creation order within the nominal quota (StrictFIFO stops at the first that does not fit,
   BestEffortFIFO goes on), and keeps ClusterQueue and LocalQueue status counts current.
4. ``pending_workloads(state, cluster_queue=..., namespace=..., local_queue=...)``: the visibility API's
   items, in queue order, with positions.
Admission removes only Kueue's gate: a pod also gated by another controller stays unscheduled until that
gate goes too.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field

from gpupoc.sim import clock
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers.scheduling import gpu_request, priority_of
from gpupoc.sim.events import NORMAL
from gpupoc.sim.store import Change, Conflict

log = logging.getLogger(__name__)

GPU = "nvidia.com/gpu"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
MANAGED_LABEL = "kueue.x-k8s.io/managed"
ADMISSION_GATE = "kueue.x-k8s.io/admission"
POD_SET = "main"
COMPONENT = "kueue-admission"
Key = tuple[str, str]


def workload_name(pod_name: str, pod_uid: str) -> str:
    """Kueue's name for a pod's Workload: ``pod-<pod name>-<5 hex of a hash of the owner>``."""
    digest = hashlib.sha1(f"{pod_uid}/v1/Pod".encode()).hexdigest()[:5]
    return f"pod-{pod_name[:240]}-{digest}"


def set_condition(obj: dict, type_: str, status: str, reason: str, message: str) -> bool:
    """metav1.Condition semantics on a Workload; returns whether it changed."""
    conds = obj.setdefault("status", {}).setdefault("conditions", [])
    current = next((c for c in conds if c["type"] == type_), None)
    if current and (current["status"], current["reason"], current["message"]) == (status, reason, message):
        return False
    new = {"type": type_, "status": status, "reason": reason, "message": message,
           "lastTransitionTime": clock.rfc3339(), "observedGeneration": 1}
    if current is not None:
        if current["status"] == status:
            new["lastTransitionTime"] = current["lastTransitionTime"]
        conds[conds.index(current)] = new
    else:
        conds.append(new)
    return True


def pending_message(flavor: str, need: int, used: int, nominal: int) -> str:
    """Kueue's flavor-assignment failure for one pod set."""
    if need > nominal:
        return (f"couldn't assign flavors to pod set {POD_SET}: insufficient quota for {GPU} in flavor {flavor}, "
                f"request > maximum capacity ({need} > {nominal})")
    return (f"couldn't assign flavors to pod set {POD_SET}: insufficient unused quota for {GPU} in flavor "
            f"{flavor}, {used + need - nominal} more needed")


@dataclass
class Entry:
    """One Workload as the queue manager sees it."""

    key: Key  # (namespace, workload name)
    pod: Key
    local_queue: str
    gpus: int
    priority: int
    created: str
    seq: int
    admitted: bool = False
    finished: bool = False


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
        for wl in self.state.store.list("workloads"):
            self._index(wl)
        self.state.store.add_listener(self._on_change)

    def _on_change(self, change: Change) -> None:
        if change.resource in ("clusterqueues", "localqueues", "resourceflavors"):
            meta = change.obj["metadata"]
            key = (change.resource, meta.get("namespace", ""), meta["name"])
            spec = None if change.type == "DELETED" else change.obj.get("spec")
            if self._specs.get(key) != spec:  # status-only updates (ours) change nothing
                self._specs[key] = spec
                self.dirty = True
        elif change.resource == "workloads" and change.type == "DELETED":
            self.dirty = True
        elif change.resource == "pods":
            meta = change.obj["metadata"]
            key = (meta.get("namespace", ""), meta["name"])
            if key in self.by_pod and (change.type == "DELETED"
                                       or change.obj.get("status", {}).get("phase") in ("Succeeded", "Failed")):
                self.dirty = True

    def _index(self, wl: dict) -> Entry:
        meta, spec = wl["metadata"], wl["spec"]
        owner = (meta.get("ownerReferences") or [{}])[0]
        conds = {c["type"]: c["status"] for c in wl.get("status", {}).get("conditions") or []}
        self._seq += 1
        entry = Entry((meta["namespace"], meta["name"]), (meta["namespace"], owner.get("name", "")),
                      spec.get("queueName", ""), sum(_podset_gpus(ps) for ps in spec.get("podSets") or []),
                      int(spec.get("priority") or 0), meta.get("creationTimestamp", ""), self._seq,
                      admitted=conds.get("QuotaReserved") == "True", finished=conds.get("Finished") == "True")
        self.entries[entry.key] = entry
        self.by_pod[entry.pod] = entry.key
        return entry

    # -- workload creation --------------------------------------------------------------------------
    def create_workload(self, pod: dict) -> dict | None:
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        if key in self.by_pod:
            return None
        queue = (meta.get("labels") or {}).get(QUEUE_LABEL, "")
        spec = pod.get("spec", {})
        wl = {
            "metadata": {
                "name": workload_name(meta["name"], meta.get("uid", "")),
                "namespace": key[0],
                "labels": {"kueue.x-k8s.io/job-uid": meta.get("uid", "")},
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"],
                                     "uid": meta.get("uid", ""), "controller": True, "blockOwnerDeletion": True}],
                "finalizers": ["kueue.x-k8s.io/resource-in-use"],
                "generation": 1,
            },
            "spec": {
                "active": True,
                "queueName": queue,
                "priority": priority_of(pod),
                "priorityClassName": spec.get("priorityClassName", ""),
                "priorityClassSource": "scheduling.k8s.io/priorityclass" if spec.get("priorityClassName") else "",
                "podSets": [{"name": POD_SET, "count": 1, "template": {
                    "metadata": {"labels": dict(meta.get("labels") or {})}, "spec": _template_spec(spec)}}],
            },
            "status": {"conditions": []},
        }
        if self.state.store.get("localqueues", key[0], queue) is None:
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
        store = self.state.store
        while self.to_create:
            ns, name = self.to_create.pop(0)
            pod = store.get("pods", ns, name)
            if pod is not None and (ns, name) not in self.by_pod:
                self.create_workload(pod)
        if not self.dirty:
            return 0
        self.dirty = False
        self._finish()
        admitted = 0
        queues = self._queues()
        for cq in store.list("clusterqueues"):
            admitted += self._admit_queue(cq, queues)
        self._update_status(queues)
        return admitted

    def _finish(self) -> None:
        store = self.state.store
        for entry in list(self.entries.values()):
            if entry.finished:
                continue
            pod = store.get("pods", *entry.pod)
            wl = store.get("workloads", *entry.key)
            if wl is None:
                self._drop(entry)
            elif pod is None:  # owner gone: the garbage collector deletes the Workload
                store.delete("workloads", *entry.key)
                self._drop(entry)
            elif pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
                ok = pod["status"]["phase"] == "Succeeded"
                message = "Job finished successfully" if ok else (pod["status"].get("message") or "Job failed")
                set_condition(wl, "Finished", "True", "Succeeded" if ok else "Failed", message)
                store.update("workloads", wl)
                entry.finished = True

    def _drop(self, entry: Entry) -> None:
        self.entries.pop(entry.key, None)
        if self.by_pod.get(entry.pod) == entry.key:
            del self.by_pod[entry.pod]

    def _queues(self) -> dict[Key, str]:
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

    def _admit_queue(self, cq: dict, queues: dict[Key, str]) -> int:
        name = cq["metadata"]["name"]
        flavor, nominal = _flavor_quota(cq)
        strict = cq.get("spec", {}).get("queueingStrategy") == "StrictFIFO"
        used, admitted, blocked = self.usage(name, queues), 0, False
        for entry in self.ordered(name, queues):
            wl = self.state.store.get("workloads", *entry.key)
            if wl is None:
                continue
            if not blocked and used + entry.gpus <= nominal:
                self._admit(entry, wl, name, flavor)
                used += entry.gpus
                admitted += 1
                continue
            if blocked and used + entry.gpus <= nominal:
                continue  # StrictFIFO: waits behind the head without a flavor verdict
            message = pending_message(flavor, entry.gpus, used, nominal)
            if set_condition(wl, "QuotaReserved", "False", "Pending", message):
                self.state.store.update("workloads", wl)
            blocked = blocked or strict
        return admitted

    def _admit(self, entry: Entry, wl: dict, cq: str, flavor: str) -> None:
        store = self.state.store
        wl["status"]["admission"] = {"clusterQueue": cq, "podSetAssignments": [{
            "name": POD_SET, "flavors": {GPU: flavor}, "resourceUsage": {GPU: str(entry.gpus)}, "count": 1}]}
        set_condition(wl, "QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {cq}")
        set_condition(wl, "Admitted", "True", "Admitted", "The workload is admitted")
        for cond in list(wl["status"].get("conditions") or []):  # a requeued Workload keeps its eviction as history
            if cond["type"] in ("Evicted", "Preempted") and cond["status"] == "True":
                set_condition(wl, cond["type"], "False", "QuotaReserved", "Previously: " + cond["message"])
        store.update("workloads", wl)
        entry.admitted = True
        self.state.events.record(wl, "QuotaReserved", f"Quota reserved in ClusterQueue {cq}, wait time since "
                                 f"queued was {_age(entry.created)}s", NORMAL, component=COMPONENT)
        self.state.events.record(wl, "Admitted", f"Admitted by ClusterQueue {cq}, wait time since reservation "
                                 "was 0s", NORMAL, component=COMPONENT)
        pod = store.get("pods", *entry.pod)
        if pod is None:
            return
        spec = pod.setdefault("spec", {})
        gates = [g for g in spec.get("schedulingGates") or [] if g.get("name") != ADMISSION_GATE]
        if gates:
            spec["schedulingGates"] = gates
        else:
            spec.pop("schedulingGates", None)
        flavor_obj = store.get("resourceflavors", None, flavor)
        labels = (flavor_obj or {}).get("spec", {}).get("nodeLabels") or {}
        if labels:
            spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), **labels}
        store.update("pods", pod)
        self.state.kick()

    def _update_status(self, queues: dict[Key, str]) -> None:
        store = self.state.store
        for cq in store.list("clusterqueues"):
            name = cq["metadata"]["name"]
            flavor, _ = _flavor_quota(cq)
            mine = [e for e in self.entries.values()
                    if not e.finished and queues.get((e.key[0], e.local_queue)) == name]
            used = sum(e.gpus for e in mine if e.admitted)
            admitted = sum(1 for e in mine if e.admitted)
            usage = [{"name": flavor, "resources": [{"name": GPU, "total": str(used), "borrowed": "0"}]}]
            status = {**cq.get("status", {}), "pendingWorkloads": len(mine) - admitted,
                      "reservingWorkloads": admitted, "admittedWorkloads": admitted,
                      "flavorsReservation": usage, "flavorsUsage": usage,
                      "conditions": [{"type": "Active", "status": "True", "reason": "Ready",
                                      "message": "Can admit new workloads", "observedGeneration": 1,
                                      "lastTransitionTime": cq["metadata"].get("creationTimestamp", "")}]}
            if status != cq.get("status"):
                cq["status"] = status
                store.update("clusterqueues", cq)
        for lq in store.list("localqueues"):
            key = (lq["metadata"]["namespace"], lq["metadata"]["name"])
            mine = [e for e in self.entries.values() if not e.finished and (e.key[0], e.local_queue) == key]
            admitted = [e for e in mine if e.admitted]
            cq = store.get("clusterqueues", None, queues.get(key, ""))
            flavor = _flavor_quota(cq)[0] if cq else ""
            usage = [{"name": flavor, "resources": [{"name": GPU, "total": str(sum(e.gpus for e in admitted))}]}]
            status = {**lq.get("status", {}), "pendingWorkloads": len(mine) - len(admitted),
                      "reservingWorkloads": len(admitted), "admittedWorkloads": len(admitted),
                      "flavorsReservation": usage, "flavorUsage": usage}
            if status != lq.get("status"):
                lq["status"] = status
                store.update("localqueues", lq)


def _podset_gpus(podset: dict) -> int:
    return gpu_request({"spec": podset.get("template", {}).get("spec", {})}) * int(podset.get("count", 1))


def _template_spec(spec: dict) -> dict:
    drop = ("nodeName", "schedulingGates")
    return {k: v for k, v in spec.items() if k not in drop}


def _flavor_quota(cq: dict) -> tuple[str, int]:
    for group in cq.get("spec", {}).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for res in flavor.get("resources") or []:
                if res.get("name") == GPU:
                    try:
                        return flavor.get("name", ""), int(str(res.get("nominalQuota", "0")))
                    except ValueError:
                        return flavor.get("name", ""), 0
    return "", 0


def _age(created: str) -> int:
    try:
        return max(0, int((clock.now() - clock.parse(created)).total_seconds()))
    except ValueError:
        return 0


# -- module API used by the API server and the controller loop -------------------------------------
def kueue_for(state: ClusterState) -> Kueue:
    """The state's queue manager, created on first use."""
    if state.kueue is None:
        state.kueue = Kueue(state)
    return state.kueue


def on_pod_create(state: ClusterState, pod: dict) -> None:
    """Mutate a pod about to be stored the way Kueue's pod webhook does (see module docstring)."""
    try:
        meta = pod.setdefault("metadata", {})
        labels = meta.get("labels") or {}
        if not labels.get(QUEUE_LABEL):
            return
        meta["labels"] = {**labels, MANAGED_LABEL: "true"}
        spec = pod.setdefault("spec", {})
        gates = list(spec.get("schedulingGates") or [])
        if not any(g.get("name") == ADMISSION_GATE for g in gates):
            gates.append({"name": ADMISSION_GATE})
        spec["schedulingGates"] = gates
        kueue_for(state).to_create.append((meta.get("namespace", ""), meta.get("name", "")))
    except Exception:  # the API must still store the pod
        log.exception("kueue: could not prepare pod %s", pod.get("metadata", {}).get("name"))


def after_pod_created(state: ClusterState, pod: dict) -> None:
    """Create the Workload of a pod just stored (no-op for pods Kueue does not manage)."""
    try:
        if (pod.get("metadata", {}).get("labels") or {}).get(MANAGED_LABEL) == "true":
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
    queues = kq._queues()
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
