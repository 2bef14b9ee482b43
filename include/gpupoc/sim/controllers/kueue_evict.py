"""Kueue's eviction and requeue (the ``kueue-requeue`` behaviour profile), in Kueue's own words.

Sources (kubernetes-sigs/kueue): ``pkg/scheduler/preemption`` ``preemptionMessage`` ("Preempted to accommodate a
workload (UID: ..., JobUID: ...) due to prioritization in the ClusterQueue"), ``pkg/workload``
``SetEvictedCondition`` / ``reportEvictedWorkload`` (event ``EvictedDueTo<reason>``), the job reconciler's
``stopJob`` (event ``Stopped`` from ``pod-kueue-controller``; a plain pod gets condition ``TerminationTarget``
reason ``WorkloadEvictedDueToPreempted``) and ``SetRequeuedCondition``; on a later admission ``SetQuotaReservation``
turns ``Evicted``/``Preempted`` to False with "Previously: <message>" (``kueue.Kueue._admit``).

``stop_pod`` marks a preempted pod (and its Workload, when it has one) the Kueue way; ``adopt`` hands the
Workload of a taken-away pod to its replacement, which then waits for the Workload's re-admission.
"""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import kueue_types as K
from gpupoc.sim.controllers.kueue_groups import POD_CONTROLLER
from gpupoc.sim.controllers.scheduling import set_condition as set_pod_condition
from gpupoc.sim.events import NORMAL

EVICTED_BY_PREEMPTION = "Preempted"
STOP_REASON = "WorkloadEvictedDueToPreempted"
IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_FAIR_SHARING = "InCohortFairSharing"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"
HUMAN_READABLE = {  # preemption.HumanReadablePreemptionReasons
    IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
    IN_COHORT_RECLAMATION: "reclamation within the cohort",
    IN_COHORT_FAIR_SHARING: "Fair Sharing within the cohort",
    IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
}


def workload_message(wl: dict | None, fallback_uid: str = "", reason: str = IN_CLUSTER_QUEUE,
                     preemptor_path: str = "", preemptee_path: str = "") -> str:
    """``preemptionMessage``: the preemptor Workload's and job's UIDs, why, and the preemptor's and preemptee's
    ClusterQueue paths (``cq_path``; UNKNOWN when missing), as real Kueue v0.17.0 writes it."""
    wl_uid = (wl or {}).get("metadata", {}).get("uid") or "UNKNOWN"
    job_uid = ((wl or {}).get("metadata", {}).get("labels") or {}).get(K.JOB_UID_LABEL) or fallback_uid or "UNKNOWN"
    return (f"Preempted to accommodate a workload (UID: {wl_uid}, JobUID: {job_uid}) due to {HUMAN_READABLE[reason]}"
            f"; preemptor path: {preemptor_path or 'UNKNOWN'}; preemptee path: {preemptee_path or 'UNKNOWN'}")


def cq_path(cluster_queue: str, cohort: str | None) -> str:
    """A ClusterQueue's path from its cohort (``buildCQPath``): ``/<cohort>/<cq>``, or ``/<cq>`` alone."""
    return f"/{cohort}/{cluster_queue}" if cohort else f"/{cluster_queue}"


def priority_note(preemptor: int, preemptee: int) -> str:
    """What the ``Preempted`` and ``PreemptedWorkload`` events add: both effective priorities (no boost here)."""
    return (f"; preemptor effective priority: {preemptor} (base: {preemptor}, boost: 0); preemptee effective "
            f"priority: {preemptee} (base: {preemptee}, boost: 0)")


def _path_of(state: ClusterState, entry) -> str:
    kq = state.kueue
    cq = kq.local_queues().get((entry.key[0], entry.local_queue), "") if kq is not None and entry else ""
    obj = state.store.get("clusterqueues", None, cq) if cq else None
    return cq_path(cq, (obj or {}).get("spec", {}).get("cohort")) if obj else ""


def preemption_message(state: ClusterState, preemptor: dict) -> str:
    """Kueue's message for a pod preempted by ``preemptor`` (a pod) inside its ClusterQueue."""
    meta = preemptor["metadata"]
    kq = state.kueue
    wl_key = kq.by_pod.get((meta.get("namespace", ""), meta["name"])) if kq is not None else None
    wl = state.store.get("workloads", *wl_key) if wl_key else None
    path = _path_of(state, kq.entries.get(wl_key)) if wl_key else ""
    return workload_message(wl, meta.get("uid", ""), preemptor_path=path, preemptee_path=path)


def stop_pod(state: ClusterState, victim: dict, message: str) -> None:
    """Evict the victim's Workload (if any) and mark the pod for termination as Kueue's job reconciler does
    (the caller deletes it)."""
    _evict_workload(state, victim, message)
    mark_stopped(state, victim, message)


def mark_stopped(state: ClusterState, victim: dict, message: str) -> None:
    """The pod of an evicted Workload: condition TerminationTarget (WorkloadEvictedDueToPreempted), event
    ``Stopped``."""
    set_pod_condition(victim, "TerminationTarget", "True", STOP_REASON, message)
    state.store.update("pods", victim)
    state.events.record(victim, "Stopped", message, NORMAL, component=POD_CONTROLLER)


def _evict_workload(state: ClusterState, victim: dict, message: str) -> None:
    kq = state.kueue
    meta = victim["metadata"]
    key = kq.by_pod.get((meta.get("namespace", ""), meta["name"])) if kq is not None else None
    entry = kq.entries.get(key) if key else None
    if entry is not None:
        evict_workload(state, entry, message, IN_CLUSTER_QUEUE)


def evict_workload(state: ClusterState, entry, message: str, reason: str, priorities: str = "") -> None:
    """Evict an admitted Workload the way Kueue's preemptor does: ``Evicted`` (reason Preempted),
    ``Preempted`` (``reason``), no more quota, ``Requeued``, eviction counted (no underlying cause: real Kueue
    v0.17.0 writes none for a preemption), events (``Preempted`` with ``priorities``, ``priority_note``)."""
    kq = state.kueue
    wl = state.store.get("workloads", *entry.key)
    if wl is None or entry.finished:
        return
    status = wl.setdefault("status", {})
    K.set_condition(wl, "Evicted", "True", EVICTED_BY_PREEMPTION, message)
    K.set_condition(wl, "Preempted", "True", reason, message)
    K.set_condition(wl, "QuotaReserved", "False", "Pending", message)
    K.set_condition(wl, "Admitted", "False", "NoReservation", "The workload has no reservation")
    K.set_condition(wl, "Requeued", "True", EVICTED_BY_PREEMPTION, message)
    status.pop("admission", None)
    stats = status.setdefault("schedulingStats", {}).setdefault("evictions", [])
    row = next((r for r in stats if r.get("reason") == EVICTED_BY_PREEMPTION), None)
    if row is None:
        stats.append({"reason": EVICTED_BY_PREEMPTION, "underlyingCause": "", "count": 1})
    else:
        row["count"] = int(row.get("count", 0)) + 1
    state.store.update("workloads", wl)
    entry.admitted = False
    kq.dirty = True
    state.events.record(wl, f"EvictedDueTo{EVICTED_BY_PREEMPTION}", message, NORMAL, component=K.COMPONENT)
    state.events.record(wl, "Preempted", message + priorities, NORMAL, component=K.COMPONENT)


def adopt(state: ClusterState, old: tuple[str, str], pod: dict) -> None:
    """Give the Workload of the taken-away pod ``old`` to its replacement ``pod`` (about to be stored).

    An evicted Workload waits for re-admission, so the replacement keeps Kueue's admission gate; a Workload
    still admitted (its pod was lost to a node failure) lets the replacement be scheduled at once."""
    kq = state.kueue
    key = kq.by_pod.get(old) if kq is not None else None
    entry = kq.entries.get(key) if key else None
    wl = state.store.get("workloads", *key) if key else None
    if entry is None or wl is None or entry.finished:
        return
    meta = pod["metadata"]
    new = (meta["namespace"], meta["name"])
    del kq.by_pod[old]
    kq.by_pod[new] = key
    entry.pods = [new if k == old else k for k in entry.pods]
    ref = {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta.get("uid", ""),
           "controller": len(entry.pods) == 1, "blockOwnerDeletion": True}
    wl["metadata"]["ownerReferences"] = [ref if r.get("name") == old[1] else r
                                         for r in wl["metadata"].get("ownerReferences") or []] or [ref]
    state.store.update("workloads", wl)
    kq.dirty = True
    if entry.admitted:
        spec = pod["spec"]
        gates = [g for g in spec.get("schedulingGates") or [] if g.get("name") not in K.KUEUE_GATES]
        if gates:
            spec["schedulingGates"] = gates
        else:
            spec.pop("schedulingGates", None)
            conds = pod.get("status", {}).get("conditions") or []
            pod["status"]["conditions"] = [c for c in conds if c.get("reason") != "SchedulingGated"]

