"""A replayed wave's release: each item's gate is lifted at its own arrival offset, not all at once.

The whole wave is created gated first (quota counts pending pods, as for any wave). When every pod exists the
schedule starts; each item's gate is then lifted ``at_seconds`` after that start (one schedule for the whole
wave; a pod an Airflow retry created gated again is released at once, its offset being past). A job the
history says was cancelled is deleted by its tenant ``cancel_after_seconds`` after its pod started, as a user
cancels a job. A rerun of the step keeps the schedule's start and every recorded release time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Iterable

from gpupoc.common.constants import PIPELINE_GATE, RELEASED_AT
from gpupoc.common.timefmt import parse_time, rfc3339, utcnow
from gpupoc.pipeline.k8s import KubeCaller
from gpupoc.pipeline.runs import pod_moments
from gpupoc.pipeline.wave import STRATEGIC, TERMINAL, Release, await_pods, item_key, list_pods, release_patch


@dataclass(frozen=True)
class Scheduled:
    """When one wave item is released (seconds after the schedule's start), and when its tenant cancels it."""

    item: str
    namespace: str
    at_seconds: float
    cancel_after_seconds: float | None = None


def schedule_of(items, namespace_of: Callable[[str], str]) -> list[Scheduled]:
    """The release schedule of a replayed class's wave items (``namespace_of``: tenant -> namespace)."""
    return [Scheduled(i.name, namespace_of(i.tenant), i.replay.at_seconds, i.replay.cancel_after_seconds)
            for i in items if i.replay is not None]


@dataclass
class ScheduledRelease(Release):
    """A release that followed a schedule: its start, each pod's planned and actual offset, the cancels."""

    schedule_started_at: str | None = None
    max_release_lag_seconds: float | None = None
    cancelled: list[dict] = field(default_factory=list)  # workload_key, pod, namespace, started_at, cancelled_at
    unfinished: list[str] = field(default_factory=list)  # items not released or cancelled by the deadline


Cancel = Callable[[Scheduled, dict], str | None]  # deletes the pod as its tenant; an error text or None


def release_schedule(caller: KubeCaller, namespaces: Iterable[str], label_selector: str, schedule: list[Scheduled],
                     *, timeout_s: float, run_s: float, started_at: datetime | None = None, poll_s: float = 0.5,
                     clock: Callable[[], datetime] = utcnow, sleep: Callable[[float], None] = time.sleep,
                     refused: Callable[[], set[str]] = set, cancel: Cancel | None = None,
                     on_waiting: Callable[[list[str], float], None] | None = None,
                     on_started: Callable[[datetime], None] | None = None,
                     on_progress: Callable[[ScheduledRelease], None] | None = None) -> ScheduledRelease:
    """Wait (at most ``timeout_s``) until every item's pod exists, then release each at its offset after the
    start (``started_at`` of an earlier try, else now) and cancel what the schedule cancels; ends when all is
    done or ``run_s`` after the start (what is left is ``unfinished``)."""
    namespaces = list(namespaces)
    expected = [s.item for s in schedule]
    _, missing = await_pods(caller, namespaces, label_selector, expected, timeout_s, poll_s, sleep, refused,
                            on_waiting)
    start = started_at or clock()
    if on_started:
        on_started(start)
    rel = ScheduledRelease(expected=len(expected), found=len(expected) - len(missing), missing=missing,
                           all_exist_at=None if missing else rfc3339(start), schedule_started_at=rfc3339(start))
    released: dict[tuple[str, str], datetime] = {}   # pods this try released
    cancelled: set[tuple[str, str]] = set()
    seen: dict[tuple[str, str], dict] = {}            # every pod seen (one the platform deleted keeps its row)
    while True:
        now = clock()
        elapsed = (now - start).total_seconds()
        present = list_pods(caller, namespaces, label_selector)
        seen.update({_key(p): p for p in present})
        pods = _pods_by_item(present)
        lifted = _release_due(caller, schedule, pods, elapsed, now, released, rel.errors)
        open_cancels = _cancel_due(schedule, pods, now, cancelled, cancel, rel) if cancel else []
        pending = [s.item for s in schedule if s.item not in missing and
                   (elapsed < s.at_seconds or any(PIPELINE_GATE in _gates(p) and (_key(p) not in released)
                                                  for p in pods.get(s.item, [])))]
        if lifted and on_progress:
            on_progress(_finish(rel, schedule, seen, released))
        if (not pending and not open_cancels) or elapsed >= run_s:
            rel.unfinished = sorted(set(pending) | set(open_cancels))
            return _finish(rel, schedule, seen, released)
        due = [s.at_seconds - elapsed for s in schedule if s.at_seconds > elapsed]
        sleep(max(0.0, min([poll_s, *due])))


def _key(pod: dict) -> tuple[str, str]:
    return (pod["metadata"]["namespace"], pod["metadata"]["name"])


def _gates(pod: dict) -> list[str]:
    return [g.get("name", "") for g in (pod.get("spec") or {}).get("schedulingGates") or []]


def _pods_by_item(pods: list[dict]) -> dict[str, list[dict]]:
    """Every pod of each item (a retry's pod too), oldest first."""
    out: dict[str, list[dict]] = {}
    for p in sorted(pods, key=lambda p: (p.get("metadata") or {}).get("creationTimestamp") or ""):
        out.setdefault(item_key(p), []).append(p)
    return out


def _release_due(caller: KubeCaller, schedule: list[Scheduled], pods: dict[str, list[dict]], elapsed: float,
                 now: datetime, released: dict, errors: list[str]) -> bool:
    """Lift the gate of every gated pod whose item is due; True when any was lifted."""
    lifted = False
    for s in schedule:
        if elapsed < s.at_seconds:
            continue
        for p in pods.get(s.item, []):
            if PIPELINE_GATE not in _gates(p) or _key(p) in released:
                continue
            ns, name = _key(p)
            r = caller.call("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}", body=release_patch(now),
                            content_type=STRATEGIC)
            if r.ok:
                released[(ns, name)] = now
                lifted = True
            else:
                errors.append(f"{ns}/{name}: HTTP {r.status}: {r.message}")
    return lifted


def _cancel_due(schedule: list[Scheduled], pods: dict[str, list[dict]], now: datetime, cancelled: set,
                cancel: Cancel, rel: ScheduledRelease) -> list[str]:
    """Cancel every running pod whose run reached its item's cancel point; the items still to be cancelled."""
    open_items = []
    for s in schedule:
        if s.cancel_after_seconds is None or not pods.get(s.item):
            continue
        pod = pods[s.item][-1]
        if _key(pod) in cancelled or (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if (pod.get("status") or {}).get("phase") in TERMINAL:
            continue  # it ended before its cancel point
        started = pod_moments(pod)["started_at"]
        if started is None or (now - started).total_seconds() < s.cancel_after_seconds:
            open_items.append(s.item)
            continue
        error = cancel(s, pod)
        cancelled.add(_key(pod))
        if error:
            rel.errors.append(f"{s.namespace}/{pod['metadata']['name']}: cancel: {error}")
        else:
            rel.cancelled.append({"workload_key": s.item, "pod": pod["metadata"]["name"], "namespace": s.namespace,
                                  "started_at": rfc3339(started), "cancelled_at": rfc3339(now)})
    return open_items


def _finish(rel: ScheduledRelease, schedule: list[Scheduled], seen: dict[tuple[str, str], dict],
            released: dict) -> ScheduledRelease:
    """The release rows (every pod of every item seen) with their planned and actual offsets."""
    start = parse_time(rel.schedule_started_at)
    pods = _pods_by_item(list(seen.values()))
    rows, lags = [], []
    for s in schedule:
        for p in pods.get(s.item, []):
            m = p["metadata"]
            at = released.get(_key(p)) or parse_time((m.get("annotations") or {}).get(RELEASED_AT))
            offset = (at - start).total_seconds() if at and start else None
            lag = None if offset is None else round(offset - s.at_seconds, 3)
            if lag is not None:
                lags.append(lag)
            rows.append({"workload_key": s.item, "pod": m["name"], "namespace": m["namespace"],
                         "created_at": m.get("creationTimestamp"), "released_at": rfc3339(at) if at else None,
                         "by_this_try": _key(p) in released, "planned_offset_seconds": s.at_seconds,
                         "release_offset_seconds": None if offset is None else round(offset, 3),
                         "release_lag_seconds": lag})
    rel.rows = rows
    rel.max_release_lag_seconds = max(lags) if lags else None
    created = [parse_time(r["created_at"]) for r in rows if r["created_at"]]
    moments = [parse_time(r["released_at"]) for r in rows if r["released_at"]]
    rel.arrival_spread_seconds = (max(created) - min(created)).total_seconds() if created else None
    rel.release_spread_seconds = (max(moments) - min(moments)).total_seconds() if moments else None
    return rel
