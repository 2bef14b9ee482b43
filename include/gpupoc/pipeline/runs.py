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
from gpupoc.pipeline.preemptors import Facts, KnownPod, judge
from gpupoc.pipeline.scheduler_objects import priority_queues
from gpupoc.pipeline.timelines import WorkloadTimeline
from gpupoc.pipeline.wave import adapter_name
from gpupoc.pipeline.workload_outcome import event_statements, group_event_statements, named_pod

OUTCOME_COLUMNS = ("outcome", "outcome_reason", "outcome_message", "outcome_by", "outcome_at", "outcome_source",
                   "outcome_explained", "final_attempt", "submitted_by", "requeued_by_platform",
                   "preempted_by_higher", "preemptor", "preemptor_priority", "preemptor_named_by",
                   "preemption_judged", "task_outcome")


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


def attempt_runs(plan, test_class: str, attempts: list[Attempt], release_rows: list[dict],
                 events: list[dict] = (), decisions: list[TaskDecision] = (),
                 facts: Facts | None = None) -> tuple[list[WorkloadTimeline], list[dict]]:
    """Timelines (attempts that reached the platform) and ``workload_runs`` rows (every attempt); ``events``
    tell when a pod seen only before its binding was scheduled and who preempted whom, ``decisions`` what each
    attempt's wave task decided, ``facts`` the other pods, bindings and queues a preemptor is found among."""
    by_pod = {(d.namespace, d.pod): d.outcome.value for d in decisions if d.pod}
    refused = {d.item: d.outcome.value for d in decisions if not d.pod}
    from gpupoc.plan import class_items
    from gpupoc.plan.overrides import item_workload

    items = {i.name: i for i in class_items(plan, test_class)}
    released = {(r.get("namespace"), r.get("pod")): parse_time(r.get("released_at")) for r in release_rows}
    timelines, rows, pods = [], [], []
    about = _events_by_pod(events)
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
            "gang_min_available": item.min_available if item.gang else None, "preemptor": None,
            "preemptor_priority": None, "preemptor_named_by": None, "preemption_judged": None})
        if a.pod_name:  # the wave's pods, among which a preemptor is looked for first
            pods.append(KnownPod(f"{a.namespace}/{name}", priority, mo.get("node"),
                                 (pod.get("metadata") or {}).get("uid")))
    _judge_preemptions(plan, rows, pods, about, facts)
    return timelines, rows


def _judge_preemptions(plan, rows: list[dict], pods: list[KnownPod], about: dict[tuple, list[dict]],
                       facts: Facts | None) -> None:
    """Each preempted row's preemptor and QC-13's judgement of it (``pipeline/preemptors.py``): the wave's pods
    are known beside ``facts``' (replicas, bindings, queues), and each victim's statements are read from the
    index of events by pod (``about``), pod group events included, so the work grows with the wave."""
    facts = facts or Facts()
    if not facts.queues:
        facts.queues = priority_queues(plan)
    for known in pods:
        facts.add(known, first=True)
    facts.with_bindings()
    within_queue = priority_within_queue(adapter_name(plan))
    for r in rows:
        if r["outcome"] != "preempted":
            continue
        key = (r["namespace"], r["pod"])
        said = event_statements(about.get(key, []), *key) + \
            group_event_statements(about.get(("PodGroup",) + key, []), *key)
        p = judge(r, said, facts, within_queue)
        r.update(preempted_by_higher=p.by_higher, preemptor=p.preemptor, preemptor_priority=p.priority,
                 preemptor_named_by=p.named_by, preemption_judged=p.judgement.value)


def _events_by_pod(events) -> dict[tuple, list[dict]]:
    """Events by the pod they are about, and (under ``("PodGroup", ns, pod)``) the pod group events that name
    a pod: built once, not a scan of all events per attempt."""
    about: dict[tuple, list[dict]] = {}
    for e in events:
        inv = e.get("involvedObject") or e.get("regarding") or {}
        about.setdefault((inv.get("namespace") or (e.get("metadata") or {}).get("namespace"), inv.get("name")),
                         []).append(e)
        in_group = named_pod(e)
        if in_group is not None:
            about.setdefault(("PodGroup",) + in_group, []).append(e)
    return about


def _ended_at(a: Attempt):
    """When a preempted, evicted or deleted attempt stopped holding its GPUs (as the platform recorded it)."""
    return a.outcome.at if a.outcome.outcome.value in ("preempted", "evicted", "deleted") else None
