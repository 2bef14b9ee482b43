"""``workload_runs``: one row per attempt of every wave item, with its moments and its outcome.

The timelines of the attempts that reached the platform feed the congestion reconstruction. A resubmitted
attempt was never gated, so its wait starts at its submission; the first attempt's at the gate's release.
Beside the evidence's outcome stands what the attempt's wave task decided (``task_outcome``): both come from
``attempts.classify_attempt`` on the same records, so they agree unless a record arrived after the task ended.
"""

from __future__ import annotations

import re
from datetime import datetime

from gpupoc.common.priority import priority_within_queue
from gpupoc.common.timefmt import parse_time
from gpupoc.pipeline.attempts import Attempt, TaskDecision
from gpupoc.pipeline.k8s import pod_gpus
from gpupoc.pipeline.timelines import WorkloadTimeline
from gpupoc.pipeline.wave import adapter_name
from gpupoc.pipeline.workload_outcome import event_statements

OUTCOME_COLUMNS = ("outcome", "outcome_reason", "outcome_message", "outcome_by", "outcome_at", "outcome_source",
                   "outcome_explained", "final_attempt", "submitted_by", "requeued_by_platform",
                   "preempted_by_higher", "task_outcome")


def _condition(pod: dict, type_: str) -> dict:
    return next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == type_), {})


def _container(pod: dict) -> dict:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return next((c for c in statuses if c.get("name") == "base"), statuses[0] if statuses else {})


def pod_moments(pod: dict) -> dict:
    """submitted, scheduled, started, finished (UTC) plus phase, node, exit code, reason, message."""
    m, st = pod.get("metadata") or {}, pod.get("status") or {}
    sched = _condition(pod, "PodScheduled")
    c = _container(pod)
    state = c.get("state") or {}
    last = c.get("lastState") or {}
    term = state.get("terminated") or last.get("terminated") or {}
    run = state.get("running") or {}
    waiting = state.get("waiting") or {}
    return {
        "submitted_at": parse_time(m.get("creationTimestamp")),
        "scheduled_at": parse_time(sched.get("lastTransitionTime")) if sched.get("status") == "True" else None,
        "started_at": parse_time(run.get("startedAt") or term.get("startedAt")),
        "finished_at": parse_time(term.get("finishedAt")),
        "phase": st.get("phase"),
        "node": (pod.get("spec") or {}).get("nodeName"),
        "exit_code": term.get("exitCode"),
        "reason": term.get("reason") or waiting.get("reason") or st.get("reason"),
        "message": term.get("message") or waiting.get("message") or st.get("message"),
        "restarts": c.get("restartCount"),
    }


_ASSIGNED = re.compile(r"\bto (?:node )?(?P<node>[a-z0-9][a-z0-9.-]*)", re.I)


def scheduled_from_events(events: list[dict], namespace: str, pod: str) -> tuple[datetime | None, str | None]:
    """When and where the platform said it placed the pod (its ``Scheduled`` event), for a pod last seen
    before it was bound: "Successfully assigned ns/p to node-1" (kube-scheduler, Volcano, KAI)."""
    for s in event_statements(events, namespace, pod):
        if s.reason == "Scheduled":
            m = _ASSIGNED.search(s.message or "")
            return s.at, (m.group("node") if m else None)
    return None, None


_PLACED_WITHIN_SECONDS = 60


def attempt_runs(plan, test_class: str, attempts: list[Attempt], release_rows: list[dict],
                 events: list[dict] = (), decisions: list[TaskDecision] = ()) -> tuple[list[WorkloadTimeline],
                                                                                     list[dict]]:
    """Timelines (attempts that reached the platform) and ``workload_runs`` rows (every attempt); ``events``
    tell when a pod seen only before its binding was scheduled, ``decisions`` what each attempt's wave task
    decided."""
    by_pod = {(d.namespace, d.pod): d.outcome.value for d in decisions if d.pod}
    refused = {d.item: d.outcome.value for d in decisions if not d.pod}
    from gpupoc.plan import class_items
    from gpupoc.plan.overrides import item_workload

    items = {i.name: i for i in class_items(plan, test_class)}
    released = {(r.get("namespace"), r.get("pod")): parse_time(r.get("released_at")) for r in release_rows}
    within_queue = priority_within_queue(adapter_name(plan))
    timelines, rows = [], []
    about: dict[tuple, list[dict]] = {}  # events by the pod they are about (not a scan of all per attempt)
    for e in events:
        inv = e.get("involvedObject") or e.get("regarding") or {}
        about.setdefault((inv.get("namespace") or (e.get("metadata") or {}).get("namespace"), inv.get("name")),
                         []).append(e)
    for a in attempts:
        item = items.get(a.item)
        if item is None:
            continue
        wl, tenant = item_workload(plan, item), plan.tenant(item.tenant)
        pod = a.pod or {}
        mo = pod_moments(pod) if a.pod else {}
        if a.pod and mo["scheduled_at"] is None and not a.present:
            mo["scheduled_at"], node = scheduled_from_events(about.get((a.namespace, a.pod_name), []), a.namespace,
                                                             a.pod_name)
            mo["node"] = mo["node"] or node
        priority = (pod.get("spec") or {}).get("priority")
        priority = int(plan.priority_value(item.priority_class) if priority is None else priority)
        gpus = (pod_gpus(a.pod) if a.pod else 0) or wl.gpus
        name = a.pod_name or f"{a.item} (never created)"
        t = None
        if a.pod is not None:
            t = WorkloadTimeline(
                workload_key=a.item, pod=name, namespace=a.namespace, tenant=tenant.name, pool=wl.pool,
                priority_class=item.priority_class, priority=priority, gpus=gpus, submitted_at=mo["submitted_at"],
                released_at=released.get((a.namespace, a.pod_name)), scheduled_at=mo["scheduled_at"],
                started_at=mo["started_at"], finished_at=mo["finished_at"] or _ended_at(a),
                phase=mo["phase"] or "", node=mo["node"], gang=item.gang, gang_size=item.min_available)
            timelines.append(t)
        o = a.outcome
        rows.append({
            "test_class": test_class, "tenant": tenant.name, "namespace": a.namespace, "pod": name,
            "workload": wl.name, "task_type": wl.task_type, "priority_class": item.priority_class,
            "priority": priority, "gpus": gpus, "pool": wl.pool, "node": mo.get("node"),
            "submitted_at": mo.get("submitted_at") or a.created_at or (o.at if a.pod is None else None), "released_at": t.released_at if t else None,
            "scheduled_at": mo.get("scheduled_at"), "started_at": mo.get("started_at"),
            "finished_at": t.finished_at if t else None, "wait_seconds": t.wait_seconds if t else None,
            "phase": mo.get("phase"), "exit_code": mo.get("exit_code"), "reason": mo.get("reason"),
            "message": mo.get("message"), "attempt": a.number, "role": item.role, "scenario": item.scenario,
            "item": a.item, "outcome": o.outcome.value, "outcome_reason": o.reason, "outcome_message": o.message,
            "outcome_by": o.by, "outcome_at": o.at, "outcome_source": o.source, "outcome_explained": o.explained,
            "final_attempt": a.final, "submitted_by": a.submitted_by, "requeued_by_platform": a.requeued_by_platform,
            "preempted_by_higher": None, "gang": item.gang,
            "task_outcome": by_pod.get((a.namespace, a.pod_name)) if a.pod_name else refused.get(a.item),
            "gang_min_available": item.min_available if item.gang else None})
    by_key = {f"{r['namespace']}/{r['pod']}": r for r in rows}
    by_node: dict[str, list[dict]] = {}  # a victim's preemptor is looked for on its node only (not every row)
    for r in rows:
        if r["node"] and r["scheduled_at"] is not None:
            by_node.setdefault(r["node"], []).append(r)
    for r in rows:
        if r["outcome"] != "preempted":
            continue
        named = r["outcome_by"] and ("/" in r["outcome_by"] or r["outcome_by"].startswith("uid "))
        preemptor = by_key.get(r["outcome_by"]) if named else placed_after(r, by_node.get(r["node"] or "", []))
        if preemptor is not None:
            if within_queue and preemptor["tenant"] != r["tenant"]:
                continue  # another queue's reclaim or fair share: queue policy, not priority (left unknown)
            r["preempted_by_higher"] = preemptor["priority"] > r["priority"]
    return timelines, rows


def placed_after(victim: dict, rows: list[dict]) -> dict | None:
    """The preemptor of a victim whose platform named no pod (Volcano's "Pod is evicted, because of
    preempt", or only the deleting scheduler's identity): of the pods waiting when the victim was stopped,
    the highest-priority one placed on the victim's node within a minute after. A wrongful preemption still
    shows, since then no such pod outranks the victim. ``rows`` may be only the rows placed on the victim's
    node (``attempt_runs`` indexes them by node, so a wave of 10,000 pods is not compared pairwise)."""
    at, node = victim["outcome_at"], victim["node"]
    if at is None or not node:
        return None
    waiting = [r for r in rows if r is not victim and r["node"] == node and r["scheduled_at"] is not None
               and r["submitted_at"] is not None and r["submitted_at"] <= at <= r["scheduled_at"]
               and (r["scheduled_at"] - at).total_seconds() <= _PLACED_WITHIN_SECONDS]
    return max(waiting, key=lambda r: r["priority"] or 0, default=None)


def _ended_at(a: Attempt):
    """When a preempted, evicted or deleted attempt stopped holding its GPUs (as the platform recorded it)."""
    return a.outcome.at if a.outcome.outcome.value in ("preempted", "evicted", "deleted") else None
