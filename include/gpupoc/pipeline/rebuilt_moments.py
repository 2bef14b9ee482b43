"""Waits no look saw, each judged in the wave as its timelines tell it at a scheduling event's moment.

One sweep over those moments in time order keeps the GPUs held and each pool's queue up to date, change by
change of the timelines; each moment then puts the event in its pod's place, judges it (``bottleneck_at``)
and takes it back. A wave rebuilt whole for every such moment cost the whole wave per wait: at 10,000 pods,
whose waits have mostly distinct moments (their own release), minutes.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from gpupoc.common.constants import PIPELINE_GATE
from gpupoc.pipeline.bottleneck import Bottleneck, Held, queue_rank, bottleneck_at
from gpupoc.pipeline.timelines import Capacity, Observation, WorkloadTimeline

Judged = tuple[Bottleneck, list[WorkloadTimeline], int]  # the cause, the workloads ahead, the pool's free GPUs


def timeline_state(at: datetime, t: WorkloadTimeline) -> str | None:
    """What the timeline says its pod was doing at ``at``: holding GPUs, waiting, still gated, or none of them."""
    if t.scheduled_at and t.scheduled_at <= at and (t.finished_at is None or at < t.finished_at):
        return "running"
    if t.ready_at and t.ready_at <= at and (t.scheduled_at is None or at < t.scheduled_at):
        return "waiting"
    if t.released_at and at < t.released_at:
        return "gated"
    return None


def timeline_observation(at: datetime, t: WorkloadTimeline, state: str) -> Observation:
    """The observation a look at ``at`` would have made of the timeline's pod in ``state``."""
    if state == "running":
        return Observation(taken_at=at, pod=t.pod, namespace=t.namespace, phase="Running",
                           node=t.node or "(node not recorded)")
    if state == "waiting":
        return Observation(taken_at=at, pod=t.pod, namespace=t.namespace)
    return Observation(taken_at=at, pod=t.pod, namespace=t.namespace, gates=(PIPELINE_GATE,))


@dataclass(frozen=True)
class Moment:
    """A wait to judge: its timeline, the platform's event about it, and the moment it is judged at."""

    at: datetime
    timeline: WorkloadTimeline
    event: Observation
    needs_ahead: bool = True  # False: only the cause and free GPUs are read (the workloads ahead are left out)


def judge_moments(moments: list[Moment], timelines: list[WorkloadTimeline], cap: Capacity,
                  gangs_whole: bool = True) -> list[Judged]:
    """``bottleneck_at`` of each moment's timeline, seen as its event, in the wave the timelines tell at that
    moment with the event in its pod's place; in the order given."""
    if not moments:
        return []
    sweep = _Sweep(timelines, cap, gangs_whole)
    out: list[Judged | None] = [None] * len(moments)
    for i in sorted(range(len(moments)), key=lambda i: moments[i].at):
        out[i] = sweep.judge(moments[i])
    return out  # type: ignore[return-value]


class _Sweep:
    """The wave's GPUs held and queue (a ``Held``) at the moment last judged, moved forward change by change."""

    def __init__(self, timelines: list[WorkloadTimeline], cap: Capacity, gangs_whole: bool) -> None:
        self.timelines, self.cap = timelines, cap
        self.by_key = {(t.namespace, t.pod): t for t in timelines}  # as a snapshot's accounting reads a pod
        self.same_key: dict[tuple[str, str], list[int]] = {}
        for i, t in enumerate(timelines):
            self.same_key.setdefault((t.namespace, t.pod), []).append(i)
        self.changes = sorted((m, i) for i, t in enumerate(timelines)
                              for m in {t.scheduled_at, t.finished_at, t.ready_at, t.released_at} if m is not None)
        self.held = Held(Counter(), Counter(), Counter(), Counter(), [], gangs_whole, ranked={})
        self.seen: list[Observation | None] = []
        self.next_change = 0

    def judge(self, m: Moment) -> Judged:
        self._move_to(m.at)
        key = (m.timeline.namespace, m.timeline.pod)
        mine = self.same_key.get(key, [])
        for i in mine:
            self._count(self.seen[i], -1)
        self._count(m.event, +1)
        try:
            cause, ahead, free = bottleneck_at(m.timeline, m.event, self.held, self.cap)
            return cause, ahead if m.needs_ahead else [], free
        finally:
            self._count(m.event, -1)
            for i in mine:
                self._count(self.seen[i], +1)

    def _move_to(self, at: datetime) -> None:
        """Every timeline as it stands at ``at`` (the first moment: all of them; later: those that changed since
        the last moment, whose state is the same from their change to ``at``)."""
        touched: list[int] = []
        if not self.seen:
            self.seen = [None] * len(self.timelines)
            touched = list(range(len(self.timelines)))
        while self.next_change < len(self.changes) and self.changes[self.next_change][0] <= at:
            touched.append(self.changes[self.next_change][1])
            self.next_change += 1
        for i in touched:
            self._set(i, at)

    def _set(self, i: int, at: datetime) -> None:
        t = self.timelines[i]
        state = timeline_state(at, t)
        now = None if state is None else timeline_observation(at, t, state)
        if _standing(now) == _standing(self.seen[i]):
            return
        self._count(self.seen[i], -1)
        self.seen[i] = now
        self._count(now, +1)

    def _count(self, o: Observation | None, sign: int) -> None:
        """Add (``sign`` 1) or take back (-1) what ``o`` holds or queues, as ``bottleneck.state_at`` counts it."""
        t = None if o is None else self.by_key.get((o.namespace, o.pod))
        if t is None:
            return
        h = self.held
        if o.holds_gpus:
            h.pool[self.cap.node_pool.get(o.node or "", t.pool)] += sign * t.gpus
            h.node[o.node] += sign * t.gpus
            h.tenant[t.tenant] += sign * t.gpus
            if t.gang:
                h.gang_placed[(t.namespace, t.gang)] += sign
            h.slots.clear()  # the nodes' free GPUs changed
        elif not o.node and o.phase == "Pending" and PIPELINE_GATE not in o.gates:
            self._queue(t, sign)

    def _queue(self, t: WorkloadTimeline, sign: int) -> None:
        keys, ws = self.held.ranked.setdefault(t.pool, ([], []))
        rank = queue_rank(t)
        at = bisect_left(keys, rank)
        if sign > 0:
            keys.insert(at, rank)
            ws.insert(at, t)
            return
        while ws[at] is not t:
            at += 1
        del keys[at], ws[at]


def _standing(o: Observation | None) -> tuple | None:
    """What ``bottleneck.state_at`` reads of an observation: the GPUs it holds where, or whether it queues."""
    if o is None:
        return None
    return (o.holds_gpus, o.node if o.holds_gpus else None,
            not o.node and o.phase == "Pending" and PIPELINE_GATE not in o.gates)
