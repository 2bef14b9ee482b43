"""What KAI writes after a session: a PodGroup's scheduling conditions, counts and events, its pending pods'
conditions, and the Queues' status (from each queue's ``QueueInfo``, what the session counted).

A gang that could not be placed gets (unless some of its pods already run: KAI then leaves the condition
alone) one ``schedulingConditions`` entry per node pool: type ``UnschedulableOnNodePool``, node pool
``default``, reason ``Unschedulable``, the ``JobFitErrorsToMessage`` text ("PodSchedulingErrors: Resources
were found for ..."), and ``reasons[]`` with each fit error's reason, message and queue details. The entry
goes once every pod is placed. Each session a Normal ``Unschedulable`` event repeats the message on the
PodGroup, and every pending pod gets PodScheduled=False reason ``Unschedulable`` with its own fit error
(the pod that fit nowhere) or the job's message, and a Warning ``Unschedulable`` event.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpupoc.kube.resources import GPU
from gpupoc.sim import clock
from gpupoc.sim.controllers import gang_wording as T
from gpupoc.sim.controllers.gang_jobs import GangView, Job
from gpupoc.sim.controllers.wording import KAI_POOL
from gpupoc.sim.events import NORMAL


@dataclass
class QueueInfo:
    """One KAI Queue: its spec's GPU numbers and what a session counts."""

    name: str
    parent: str | None
    priority: int
    quota: float
    weight: float
    limit: float
    allocated: float = 0.0
    non_preemptible: float = 0.0
    requested: float = 0.0
    fair_share: float = 0.0


def gpus(value: float) -> dict:
    """A ResourceList of GPUs (KAI's unlimited stays -1)."""
    return {GPU: T.humanize(value) if value >= 0 else "-1"}


def fit_errors(ctl: GangView, j: Job, result: tuple | None) -> list[tuple[str, str, dict | None]]:
    """The job's fit errors (reason, message, details) from its session result."""
    kind, info = result if result is not None else (None, None)
    if kind == "refused":
        return [info]
    if kind == "failed" and info is not None and info.failed is not None:
        cause = info.fit_error
        if j.min_member > 1 and j.ready_count < j.min_member:
            return [(T.POD_SCHEDULING_ERRORS, T.kai_gang_error(len(info.placed), j.min_member, cause), None)]
        key = info.failed[0]
        return [(T.POD_SCHEDULING_ERRORS, T.kai_pod_error(key[0], key[1], cause), None)]
    return []


def write_job_status(ctl: GangView, j: Job, result: tuple | None, queues: dict, now: float) -> None:
    pg = j.obj
    old = pg.get("status") or {}
    status = {**old}
    m = j.group.members
    if j.total < j.min_member:
        ctl.record(pg, "NotReady", T.kai_not_ready(j.min_member, j.group.count("pending", "gated", "active",
                                                                                "releasing"), len(m["gated"])),
                   NORMAL, now)
    errors = fit_errors(ctl, j, result) if m["pending"] else []
    if errors:
        message = T.kai_job_message([(r, msg) for r, msg, _ in errors])
        ctl.record(pg, "Unschedulable", message, NORMAL, now)
        failed = result[1].failed[0] if result and result[0] == "failed" and result[1].failed else None
        for key in sorted(m["pending"]):
            own = result[1].fit_error if key == failed else message
            ctl.show_pod(key, "Unschedulable", own, now)
        if not m["active"]:
            _set_condition(status, message, errors, ctl.opaque)
    elif not m["pending"] and not m["gated"]:
        status.pop("schedulingConditions", None)
    preemptible = j.preemptible
    allocated = float(j.allocated_gpus)
    status.update(pending=j.group.count("pending", "gated"), running=len(m["active"]),
                  succeeded=len(m["succeeded"]), failed=len(m["failed"]),
                  resourcesStatus={"allocated": gpus(allocated if preemptible else 0),
                                   "allocatedNonPreemptible": gpus(0 if preemptible else allocated),
                                   "requested": gpus(allocated + j.group.gpus_of("pending", "gated"))})
    if status != old:
        pg["status"] = status
        ctl.store.update("podgroups", pg)


def _set_condition(status: dict, message: str, errors: list, opaque: bool) -> None:
    reasons = []
    for reason, msg, details in errors:
        entry: dict = {"reason": reason, "message": "" if opaque else msg}
        if details and not opaque:
            entry["details"] = details
        reasons.append(entry)
    conds = list(status.get("schedulingConditions") or [])
    last = conds[-1] if conds else None
    new = {"type": T.UNSCHEDULABLE_ON_NODE_POOL, "nodePool": KAI_POOL, "reason": "Unschedulable",
           "message": "" if opaque else message, "reasons": reasons, "status": "True"}
    if last is not None and all(last.get(k) == new[k] for k in ("type", "nodePool", "reason", "message", "status")):
        return
    previous = int(last.get("transitionID", "0")) if last and str(last.get("transitionID", "0")).isdigit() else 0
    new.update(transitionID=str(previous + 1), lastTransitionTime=clock.rfc3339())
    status["schedulingConditions"] = [c for c in conds if c.get("nodePool") != KAI_POOL] + [new]


def write_queues(ctl: GangView, queues: dict[str, QueueInfo]) -> None:
    for q in ctl.store.list("queues"):
        info = queues.get(q["metadata"]["name"])
        if info is None:
            continue
        old = q.get("status") or {}
        status = {**old, "allocated": gpus(info.allocated), "allocatedNonPreemptible": gpus(info.non_preemptible),
                  "requested": gpus(info.requested)}
        children = sorted(n for n, c in queues.items() if c.parent == info.name)
        if children:
            status["childQueues"] = children
        if status != old:
            q["status"] = status
            ctl.store.update("queues", q)
