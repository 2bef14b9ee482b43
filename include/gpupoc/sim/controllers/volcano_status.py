"""What Volcano writes after a session: a PodGroup's phase, conditions and events, and its pending pods'.

Phases as ``framework.jobStatus``: ``Running`` when at least ``minMember`` pods are bound or succeeded;
``Unknown`` when some run but the gang is short; ``Inqueue`` kept once enqueued; else ``Pending``;
``Completed`` when every pod has ended. A gang short of ``minMember`` gets the ``Unschedulable`` condition
(reason ``NotEnoughResources``, the gang plugin's message) and a Warning ``Unschedulable`` event; a whole
one gets ``Scheduled`` ("tasks in gang are ready to be scheduled") and a Normal ``Scheduled`` "pod group is
ready". A condition keeps its ``transitionID`` and time until its status, reason or message changes.
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol

from gpupoc.sim import clock
from gpupoc.sim.controllers import gang_wording as T
from gpupoc.sim.controllers.gang_jobs import GangView, Job, Placement
from gpupoc.sim.events import NORMAL, WARNING

Key = tuple[str, str]
ALL_NODES_UNAVAILABLE = "all nodes are unavailable"


class VolcanoView(GangView, Protocol):
    """What the status writer sees of Volcano's session (``volcano.Volcano``) besides a gang scheduler's."""

    session_uid: str  # the session's uid, as Volcano's conditions name it
    enqueued: set[Key]  # jobs the session enqueued


def set_pg_condition(status: dict, type_: str, reason: str, message: str, transition_id: str) -> None:
    conds = [c for c in status.get("conditions") or []]
    current = next((c for c in conds if c.get("type") == type_), None)
    if current is not None and (current.get("status"), current.get("reason"), current.get("message", "")) == (
            "True", reason, message):
        return
    new = {"type": type_, "status": "True", "transitionID": transition_id, "lastTransitionTime": clock.rfc3339(),
           "reason": reason, "message": message}
    if current is not None:
        conds[conds.index(current)] = new
    else:
        conds.append(new)
    status["conditions"] = conds


def task_states(ctl: VolcanoView, j: Job) -> Counter:
    """The job's tasks by Volcano task status (Pending, Bound, Running, Releasing, Succeeded, Failed)."""
    out: Counter = Counter()
    m = j.group.members
    out["Pending"] = len(m["pending"]) + len(m["gated"])
    for k in m["active"]:
        pod = ctl.store.get("pods", *k)
        out["Running" if pod is not None and pod.get("status", {}).get("phase") == "Running" else "Bound"] += 1
    out["Releasing"] = len(m["releasing"])
    out["Succeeded"] = len(m["succeeded"])
    out["Failed"] = len(m["failed"])
    return out


def pending_reasons(j: Job, placement: Placement | None) -> dict[Key, tuple[str, str | None]]:
    """Each pending pod's TaskSchedulingReason: Schedulable (it fit; the gang did not), Unschedulable (it
    fit nowhere) or Undetermined (not tried), with the node it fit on."""
    placed = {k: node for k, _, node in (placement.placed if placement and not placement.bound else [])}
    failed = placement.failed[0] if placement and placement.failed else None
    out: dict[Key, tuple[str, str | None]] = {}
    for k in sorted(j.group.members["pending"] | j.group.members["gated"]):
        if k in placed:
            out[k] = (T.REASON_SCHEDULABLE, placed[k])
        elif k == failed:
            out[k] = (T.REASON_UNSCHEDULABLE, None)
        else:
            out[k] = (T.REASON_UNDETERMINED, None)
    return out


def write_job_status(ctl: VolcanoView, j: Job, result: tuple | None, now: float) -> None:
    kind, placement = result if result is not None else (None, None)
    pg = j.obj
    old = pg.get("status") or {}
    status = {**old}
    phase = old.get("phase") or "Pending"
    tasks = j.total + j.group.count("failed")
    if kind == "invalid":
        set_pg_condition(status, "Unschedulable", T.NOT_ENOUGH_TASKS,
                         "" if ctl.opaque else T.volcano_not_enough_tasks(j.total, j.min_member), ctl.session_uid)
    else:
        if j.key in ctl.enqueued and phase == "Pending":
            phase = "Inqueue"
        reasons = pending_reasons(j, placement)
        if j.ready_count >= j.min_member:
            phase = "Running"
            set_pg_condition(status, "Scheduled", T.SCHEDULED_REASON, "", ctl.session_uid)
            if (old.get("phase") or "Pending") not in ("Running", "Completed"):
                ctl.record(pg, "Scheduled", T.POD_GROUP_READY, NORMAL, now, every=True)
            gang_message = ""
        else:
            schedulable = sum(1 for r, _ in reasons.values() if r == T.REASON_SCHEDULABLE)
            fit = T.volcano_fit_error(task_states(ctl, j), j.min_member, Counter(r for r, _ in reasons.values()))
            unready = max(0, j.min_member - j.ready_count - schedulable)
            gang_message = T.volcano_gang_unschedulable(unready, tasks, fit)
            set_pg_condition(status, "Unschedulable", T.NOT_ENOUGH_RESOURCES, "" if ctl.opaque else gang_message,
                             ctl.session_uid)
            ctl.record(pg, "Unschedulable", T.volcano_gang_unschedulable(len(reasons), tasks, fit), WARNING, now)
            if j.group.members["active"]:
                phase = "Unknown"
            elif phase not in ("Inqueue",):
                phase = "Pending"
        _show_pods(ctl, j, reasons, placement, gang_message or ALL_NODES_UNAVAILABLE, now)
    if tasks and not j.group.count("pending", "gated", "active", "releasing"):
        phase = "Completed"
    status.update(phase=phase, running=j.group.count("active"), succeeded=j.group.count("succeeded"),
                  failed=j.group.count("failed"))
    if status != old:
        pg["status"] = status
        ctl.store.update("podgroups", pg)


def _show_pods(ctl: VolcanoView, j: Job, reasons: dict, placement: Placement | None, job_message: str,
               now: float) -> None:
    for key, (reason, node) in reasons.items():
        if key in j.group.members["gated"]:
            continue  # the API server's SchedulingGated stands
        if reason == T.REASON_SCHEDULABLE:
            message = T.volcano_schedulable(key[0], key[1], node or "")
        elif reason == T.REASON_UNSCHEDULABLE and placement is not None and placement.failed:
            message = placement.fit_error
        else:
            message = job_message
        ctl.show_pod(key, reason, message, now)
