"""Kueue's eviction and requeue (the ``kueue-requeue`` behaviour profile), in Kueue's own words.

Sources (kubernetes-sigs/kueue): ``pkg/scheduler/preemption`` ``preemptionMessage`` ("Preempted to accommodate a
workload (UID: ..., JobUID: ...) due to prioritization in the ClusterQueue"), ``pkg/workload``
``SetEvictedCondition`` / ``reportEvictedWorkload`` (event ``EvictedDueTo<reason>``), the job reconciler's
``stopJob`` (event ``Stopped``; a plain pod gets condition ``TerminationTarget`` reason
``WorkloadEvictedDueToPreempted``) and ``SetRequeuedCondition``; on a later admission ``SetQuotaReservation``
turns ``Evicted``/``Preempted`` to False with "Previously: <message>" (``kueue.Kueue._admit``).

``stop_pod`` marks a preempted pod (and its Workload, when it has one) the Kueue way; ``adopt`` hands the
Workload of a taken-away pod to its replacement, which then waits for the Workload's re-admission.
"""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import kueue as K
from gpupoc.sim.controllers.scheduling import set_condition as set_pod_condition
from gpupoc.sim.events import NORMAL

JOB_CONTROLLER = "kueue-job-controller"
EVICTED_BY_PREEMPTION = "Preempted"
STOP_REASON = "WorkloadEvictedDueToPreempted"


def preemption_message(state: ClusterState, preemptor: dict) -> str:
    """Kueue's message naming the preemptor's Workload and job UIDs (UNKNOWN when it has no Workload)."""
    meta = preemptor["metadata"]
    kq = state.kueue
    wl_key = kq.by_pod.get((meta.get("namespace", ""), meta["name"])) if kq is not None else None
    wl = state.store.get("workloads", *wl_key) if wl_key else None
    wl_uid = wl["metadata"].get("uid", "UNKNOWN") if wl else "UNKNOWN"
    job_uid = ((wl or {}).get("metadata", {}).get("labels") or {}).get("kueue.x-k8s.io/job-uid") \
        or meta.get("uid") or "UNKNOWN"
    return (f"Preempted to accommodate a workload (UID: {wl_uid}, JobUID: {job_uid}) due to prioritization in "
            "the ClusterQueue")


def stop_pod(state: ClusterState, victim: dict, message: str) -> None:
    """Evict the victim's Workload (if any) and mark the pod for termination as Kueue's job reconciler does
    (the caller deletes it)."""
    _evict_workload(state, victim, message)
    set_pod_condition(victim, "TerminationTarget", "True", STOP_REASON, message)
    state.store.update("pods", victim)
    state.events.record(victim, "Stopped", message, NORMAL, component=JOB_CONTROLLER)


def _evict_workload(state: ClusterState, victim: dict, message: str) -> None:
    kq = state.kueue
    meta = victim["metadata"]
    key = kq.by_pod.get((meta.get("namespace", ""), meta["name"])) if kq is not None else None
    entry = kq.entries.get(key) if key else None
    wl = state.store.get("workloads", *key) if key else None
    if entry is None or wl is None or entry.finished:
        return
    status = wl.setdefault("status", {})
    K.set_condition(wl, "Evicted", "True", EVICTED_BY_PREEMPTION, message)
    K.set_condition(wl, "Preempted", "True", "InClusterQueue", message)
    K.set_condition(wl, "QuotaReserved", "False", "Pending", message)
    K.set_condition(wl, "Admitted", "False", "NoReservation", "The workload has no reservation")
    K.set_condition(wl, "Requeued", "True", EVICTED_BY_PREEMPTION, message)
    status.pop("admission", None)
    stats = status.setdefault("schedulingStats", {}).setdefault("evictions", [])
    row = next((r for r in stats if r.get("reason") == EVICTED_BY_PREEMPTION), None)
    if row is None:
        stats.append({"reason": EVICTED_BY_PREEMPTION, "underlyingCause": "InClusterQueue", "count": 1})
    else:
        row["count"] = int(row.get("count", 0)) + 1
    state.store.update("workloads", wl)
    entry.admitted = False
    kq.dirty = True
    state.events.record(wl, f"EvictedDueTo{EVICTED_BY_PREEMPTION}", message, NORMAL, component=K.COMPONENT)
    state.events.record(wl, "Preempted", message, NORMAL, component=K.COMPONENT)


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
    entry.pod = new
    wl["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"],
                                          "uid": meta.get("uid", ""), "controller": True,
                                          "blockOwnerDeletion": True}]
    state.store.update("workloads", wl)
    kq.dirty = True
    if entry.admitted:
        spec = pod["spec"]
        gates = [g for g in spec.get("schedulingGates") or [] if g.get("name") != K.ADMISSION_GATE]
        if gates:
            spec["schedulingGates"] = gates
        else:
            spec.pop("schedulingGates", None)
            conds = pod.get("status", {}).get("conditions") or []
            pod["status"]["conditions"] = [c for c in conds if c.get("reason") != "SchedulingGated"]

