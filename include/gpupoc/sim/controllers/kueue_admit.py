"""Kueue's admission cycle over ClusterQueues and cohorts, and the queues' status.

Each round takes the head of every ClusterQueue (its first pending Workload not yet tried in this pass;
StrictFIFO queues stop at a head that does not fit) and orders the heads as Kueue's scheduler does:
classical, Workloads that would not borrow first, then priority, then creation; with fair sharing, the
ClusterQueue whose dominant resource share after admission is lowest first (``kueue_quota``), one
Workload per cohort per round so that shares are compared again after each admission; under
``fairshare-ignored``, creation time only. A head that fits the quota available to its ClusterQueue
(nominal, the cohort's lendable GPUs within the borrowing limit) is admitted; one that does not gets
``QuotaReserved=False`` reason ``Pending`` with Kueue's flavor-assignment message, and a Warning event
``Pending`` with it on the Workload (Kueue records one per requeue, aggregated by the event recorder; here at
most once a second per Workload and message); when preemption can make
room (``kueue_preempt``) the targets are evicted ("Preempted to accommodate a workload (UID: ..., JobUID:
...) due to <reason>", their pods stopped and deleted) and the message ends ". Pending the preemption of N
workload(s)"; the quota the preemptor needs stays reserved for it until the pass ends.
"""

from __future__ import annotations

from typing import Protocol

from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import disruption
from gpupoc.sim.controllers.kueue_evict import cq_path, evict_workload, priority_note, workload_message
from gpupoc.sim.controllers.kueue_preempt import Policy, candidates, targets
from gpupoc.sim.controllers.kueue_quota import QueueQuota, QuotaTree, weighted_share
from gpupoc.sim.controllers.kueue_types import COMPONENT, GPU, Entry, pending_message, set_condition
from gpupoc.sim.events import NORMAL, WARNING

Key = tuple[str, str]
# Kueue records "Pending" at each requeue of an inadmissible Workload (after a cluster change); the simulated
# admission retries every pass, so its repeats are recorded at most this often.
PENDING_EVENT_EVERY_S = 1.0


class QueueView(Protocol):
    """What an admission cycle sees of the queue manager (``kueue.Kueue``)."""

    entries: dict[Key, Entry]

    def local_queues(self) -> dict[Key, str]:
        """(namespace, LocalQueue) -> ClusterQueue."""

    def ordered(self, cq_name: str, queues: dict[Key, str]) -> list[Entry]:
        """The ClusterQueue's pending Workloads in queue order."""

    def usage(self, cq_name: str, queues: dict[Key, str]) -> int:
        """GPUs of the ClusterQueue's admitted, unfinished Workloads."""

    def admit(self, entry: Entry, wl: dict, cq: str, flavor: str) -> None:
        """Reserve quota and admit ``entry`` in ``cq``."""


def _gpu_resource(cq: dict) -> tuple[str, dict]:
    for group in cq.get("spec", {}).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for res in flavor.get("resources") or []:
                if res.get("name") == GPU:
                    return flavor.get("name", ""), res
    return "", {}


def _int(value: object, default: int | None = 0) -> int | None:
    if value is None:
        return default
    try:
        return int(str(value))
    except ValueError:
        return default


def quota_tree(state: ClusterState, kq: QueueView, queues: dict) -> QuotaTree:
    """The ClusterQueues' quotas and current usage (admitted, unfinished Workloads)."""
    tree = QuotaTree()
    for cq in state.store.list("clusterqueues"):
        name, spec = cq["metadata"]["name"], cq.get("spec") or {}
        flavor, res = _gpu_resource(cq)
        weight = (spec.get("fairSharing") or {}).get("weight", 1)
        try:
            weight = float(str(weight))
        except ValueError:
            weight = 1.0
        tree.queues[name] = QueueQuota(name, flavor, _int(res.get("nominalQuota")) or 0, spec.get("cohort") or None,
                                       _int(res.get("borrowingLimit"), None), _int(res.get("lendingLimit"), None),
                                       weight, kq.usage(name, queues))
    return tree


def admit_cycle(state: ClusterState, kq: QueueView) -> int:
    """Admit what fits, preempt where the policies allow (see module docstring); returns Workloads admitted."""
    queues = kq.local_queues()
    tree = quota_tree(state, kq, queues)
    specs = {cq["metadata"]["name"]: cq.get("spec") or {} for cq in state.store.list("clusterqueues")}
    fcfs = not state.reactors.fair_shares
    fair = state.config.kueue.fair_sharing and not fcfs
    pending = {name: kq.ordered(name, queues) for name in tree.queues}
    admitted = {name: [e for e in kq.entries.values() if e.admitted and not e.finished
                       and queues.get((e.key[0], e.local_queue)) == name] for name in tree.queues}
    pos = dict.fromkeys(tree.queues, 0)
    blocked: set[str] = set()
    count = 0

    def order(head: tuple[str, Entry]) -> tuple:
        name, e = head
        if fcfs:
            return (e.created, e.seq)
        first = tree.share(tree.queues[name], e.gpus) if fair else tree.borrowing(tree.queues[name], e.gpus)
        return (first, -e.priority, e.created, e.seq)

    while True:
        heads = [(n, pending[n][pos[n]]) for n in tree.queues if n not in blocked and pos[n] < len(pending[n])]
        if not heads:
            break
        served: set[tuple] = set()
        for name, e in sorted(heads, key=order):
            q = tree.queues[name]
            pool = (q.cohort, q.flavor) if q.cohort else ("", name)
            if fair and pool in served:
                continue  # fair sharing: one admission per cohort, then the shares are compared again
            served.add(pool)
            pos[name] += 1
            if _try(state, kq, e, name, tree, specs, admitted, fair):
                count += 1
                admitted[name].append(e)
            elif specs[name].get("queueingStrategy") == "StrictFIFO":
                blocked.add(name)
    return count


def _try(state: ClusterState, kq: QueueView, e: Entry, name: str, tree: QuotaTree, specs: dict, admitted: dict,
         fair: bool) -> bool:
    wl = state.store.get("workloads", *e.key)
    if wl is None:
        return False
    q = tree.queues[name]
    maximum = tree.potential_available(q)
    available = tree.available(q)
    if e.gpus <= available:
        kq.admit(e, wl, name, q.flavor)
        q.usage += e.gpus
        return True
    message = pending_message(q.flavor, e.gpus, available, maximum, e.pod_set)
    if e.gpus <= maximum:
        found = candidates(e, q, Policy.of(specs[name]), tree, admitted, fair,
                           cohort_reclaim=state.reactors.reclaim_across_queues)
        chosen = targets(e, q, tree, found, fair)
        if chosen:
            for t in chosen:
                why = workload_message(wl, reason=t.reason, preemptor_path=cq_path(name, q.cohort),
                                       preemptee_path=cq_path(t.cq, tree.queues[t.cq].cohort))
                _preempt(state, t.entry, why, t.reason, priority_note(e.priority, t.entry.priority))
                _preempted_workload(state, wl, t, priority_note(e.priority, t.entry.priority))
                tree.queues[t.cq].usage -= t.entry.gpus
                if t.entry in admitted[t.cq]:
                    admitted[t.cq].remove(t.entry)
            message += f". Pending the preemption of {len(chosen)} workload(s)"
            q.usage += e.gpus  # held for the preemptor until the pass ends
    said = message if state.reactors.reasons_shown else ""
    if set_condition(wl, "QuotaReserved", "False", "Pending", said):
        state.store.update("workloads", wl)
    if said:  # pkg/scheduler/scheduler.go requeueAndUpdate: Eventf(wl, Warning, "Pending", inadmissibleMsg)
        state.events.repeat(wl, "Pending", said, WARNING, COMPONENT, PENDING_EVENT_EVERY_S)
    return False


def _preempted_workload(state: ClusterState, wl: dict, t, priorities: str) -> None:
    """The preemptor's ``PreemptedWorkload`` event (``IssuePreemptions``)."""
    victim = state.store.get("workloads", *t.entry.key) or {"metadata": {}}
    state.events.record(wl, "PreemptedWorkload", f"Preempted workload {t.entry.key[0]}/{t.entry.key[1]} (UID: "
                        f"{victim['metadata'].get('uid', '')}) in ClusterQueue {t.cq}{priorities}", NORMAL,
                        component=COMPONENT)


def _preempt(state: ClusterState, victim: Entry, message: str, reason: str, priorities: str = "") -> None:
    evict_workload(state, victim, message, reason, priorities)
    for key in list(victim.pods):
        pod = state.store.get("pods", *key)
        if pod is not None and not pod["metadata"].get("deletionTimestamp"):
            disruption.kueue_stop(state, pod, message)


def update_status(state: ClusterState, kq: QueueView) -> None:
    """ClusterQueue and LocalQueue status: workloads pending/reserving/admitted, usage and borrowing, the
    fair-sharing weighted share (when fair sharing is on)."""
    store = state.store
    queues = kq.local_queues()
    tree = quota_tree(state, kq, queues)
    for cq in store.list("clusterqueues"):
        name = cq["metadata"]["name"]
        q = tree.queues[name]
        mine = [e for e in kq.entries.values() if not e.finished and queues.get((e.key[0], e.local_queue)) == name]
        n_admitted = sum(1 for e in mine if e.admitted)
        usage = [{"name": q.flavor, "resources": [{"name": GPU, "total": str(q.usage),
                                                   "borrowed": str(tree.borrowed(q))}]}]
        status = {**cq.get("status", {}), "pendingWorkloads": len(mine) - n_admitted,
                  "reservingWorkloads": n_admitted, "admittedWorkloads": n_admitted,
                  "flavorsReservation": usage, "flavorsUsage": usage,
                  "conditions": [{"type": "Active", "status": "True", "reason": "Ready",
                                  "message": "Can admit new workloads", "observedGeneration": 1,
                                  "lastTransitionTime": cq["metadata"].get("creationTimestamp", "")}]}
        if state.config.kueue.fair_sharing:
            status["fairSharing"] = {"weightedShare": weighted_share(tree.share(q))}
        if status != cq.get("status"):
            cq["status"] = status
            store.update("clusterqueues", cq)
    for lq in store.list("localqueues"):
        key = (lq["metadata"]["namespace"], lq["metadata"]["name"])
        mine = [e for e in kq.entries.values() if not e.finished and (e.key[0], e.local_queue) == key]
        admitted = [e for e in mine if e.admitted]
        q = tree.queues.get(queues.get(key, ""))
        usage = [{"name": q.flavor if q else "", "resources": [{"name": GPU, "total": str(sum(e.gpus for e in admitted))}]}]
        status = {**lq.get("status", {}), "pendingWorkloads": len(mine) - len(admitted),
                  "reservingWorkloads": len(admitted), "admittedWorkloads": len(admitted),
                  "flavorsReservation": usage, "flavorUsage": usage}
        if status != lq.get("status"):
            lq["status"] = status
            store.update("localqueues", lq)
