"""Queue congestion: reconstruct each wait's bottleneck and score the platform's explanation of it.

Pure functions over typed rows, no cluster access. Inputs: one ``WorkloadTimeline`` per pod (its moments:
submitted, released, scheduled, started, finished), the observer's ``Observation``s (each pod in each
snapshot, with the platform's own reason, message, queue position and ETA), and the ``Capacity`` (GPUs per
pool and node, quota per tenant). For every snapshot in which a released pod still waited, the pipeline
decides what held it back (capacity, quota, fragmentation, the queue ahead, a gate: ``bottleneck.py``), takes
the most frequent cause as the workload's bottleneck, and checks whether the platform said so.
"""

from __future__ import annotations

import statistics
from bisect import bisect_left
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime, timedelta
from typing import Callable

from gpupoc.common.constants import PIPELINE_GATE
from gpupoc.common.timefmt import NEVER
from gpupoc.pipeline.bottleneck import NAMED_BY, Bottleneck, Held, bottleneck_at, state_at
from gpupoc.pipeline.readable import ClusterNames, ExplainContext, PodRefs, classify_message, explains
from gpupoc.pipeline.rebuilt_moments import Judged, Moment, judge_moments
from gpupoc.pipeline.timelines import Capacity, Observation, WorkloadTimeline

@dataclass(frozen=True, kw_only=True)
class CongestionRow(WorkloadTimeline):
    """One workload's timeline with its wait's bottleneck and the score of the platform's explanation."""

    needs_explanation: bool
    bottleneck: str
    ahead_at_release: int
    ahead_higher_priority: int
    pool_free_at_release: int | None
    platform_reason: str | None
    platform_message: str | None
    explained: bool | None  # the one judgement of QC-05 (see ``reconstruct``); None: not judged (``judged``)
    platform_names_bottleneck: bool | None
    first_position: int | None
    eta_offered: bool
    eta_at: datetime | None
    eta_error_seconds: float | None
    eta_within_tolerance: bool | None
    explained_from: str | None = None  # "snapshots" or "events" (a wait no snapshot saw)
    observed: bool = True  # False: it needed an explanation but no snapshot or event saw it wait

    @property
    def judged(self) -> bool:
        """Its explanation can be judged: it needed one and the wait was seen (a snapshot or an event)."""
        return self.needs_explanation and self.observed

    def to_dict(self) -> dict:
        """Every field (all plain values: no deep copy, 10,000 rows at scale) and the wait."""
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "wait_seconds": self.wait_seconds}


@dataclass
class _Snapshot:
    """One snapshot, indexed by pod, with its GPU accounting computed once for every workload in it."""

    taken_at: datetime
    obs: list[Observation]
    by_pod: dict[tuple[str, str], Observation]
    held: Held | None = None

    def state_for(self, timelines: dict, cap: Capacity, gangs_whole: bool = True) -> Held:
        """``state_at`` of this snapshot, computed once."""
        if self.held is None:
            self.held = state_at(timelines, self.obs, cap, gangs_whole)
        return self.held


def _snapshots(observations: list[Observation]) -> list[_Snapshot]:
    groups: dict[datetime, list[Observation]] = defaultdict(list)
    for o in observations:
        groups[o.taken_at].append(o)
    return [_Snapshot(at, obs, {(o.namespace, o.pod): o for o in obs}) for at, obs in sorted(groups.items())]


POSITION_REASON = "positionInClusterQueue"
# Event timestamps carry whole seconds: an event this much before the release may belong to the wait.
_EVENT_SLACK = timedelta(seconds=1)


def bare_context(namespace: str, pod: str) -> ExplainContext:
    """A pod that asks for GPUs and a pod slot, in a cluster whose names are unknown."""
    return ExplainContext(PodRefs(namespace, pod))


def _with_gang(ctx: ExplainContext, t: WorkloadTimeline) -> ExplainContext:
    """``ctx`` knowing the size of the gang ``t`` belongs to, as the plan sizes it."""
    if not t.gang or t.gang_size <= 1:
        return ctx
    gang = ctx.pod.gang or t.gang
    sized = ClusterNames(gang_sizes={gang.lower(): frozenset({t.gang_size})})
    return ExplainContext(replace(ctx.pod, gang=gang), ctx.cluster.merged(sized))


def reconstruct(timelines: list[WorkloadTimeline], observations: list[Observation], cap: Capacity,
                explain_after_seconds: float = 5.0, eta_tolerance_seconds: float = 30.0,
                events: list[Observation] = (), gangs_whole: bool = True,
                context: Callable[[str, str], ExplainContext] = bare_context) -> list[CongestionRow]:
    """One ``CongestionRow`` per workload, in submission order.

    A workload needs an explanation when it waited more than ``explain_after_seconds`` after its release; an
    attempt the pipeline's gate held until it ended, before the wave's release, never waited (``_gated_throughout``).
    Its bottleneck is the most frequent reconstructed cause over the snapshots in which it waited (the later
    one on a tie); the platform explained it when any of those snapshots carried a text that names a cause
    (the pod's condition, its event, or the first of its scheduler's own objects' texts that does, judged here
    and only here against ``context``: what the pod asks for and the cluster's names, ``readable.explains``)
    or its queue position (Kueue's visibility API), and named it right when one of those texts names that
    cause. That judgement is the row's ``explained``, the name it keeps to QC-05's verdict.
    A wait no snapshot saw (the observer was late or down, or its only looks were stale: still gated after the
    release) is judged from the platform's scheduling
    ``events`` during the wait (one ``Observation`` per event moment), each in a snapshot rebuilt from the
    timelines; the row says which source explained it.
    Under a scheduler that places gangs whole (``gangs_whole``) a gang's pod waits for its whole gang.
    """
    snaps = _snapshots(observations)
    tl_by_key = {(t.namespace, t.pod): t for t in timelines}
    release = min((t.released_at for t in timelines if t.released_at), default=None)
    by_pod: dict[tuple[str, str], list[Observation]] = defaultdict(list)
    for e in events:
        by_pod[(e.namespace, e.pod)].append(e)
    waits: list[tuple[WorkloadTimeline, str, list]] = []  # each workload, its source and what saw it wait
    moments: list[Moment] = []
    for t in sorted(timelines, key=lambda w: (w.submitted_at or NEVER, w.pod)):
        seen = [(snap, snap.by_pod[(t.namespace, t.pod)]) for snap in _waiting_snapshots(t, snaps)]
        if t.ready_at and all(PIPELINE_GATE in mine.gates for _, mine in seen):  # none, or only stale looks
            mine = _event_moments(t, by_pod.get((t.namespace, t.pod), []))
            waits.append((t, "events", list(range(len(moments), len(moments) + len(mine)))))
            moments += mine
        else:
            waits.append((t, "snapshots", seen))
    judged = judge_moments(moments, timelines, cap, gangs_whole)
    rows = []
    for t, source, seen in waits:
        if source == "events":
            looks = [(judged[k], moments[k].event) for k in seen]
        else:
            looks = [(bottleneck_at(t, mine, snap.state_for(tl_by_key, cap, gangs_whole), cap), mine)
                     for snap, mine in seen]
        rows.append(_judged_row(t, looks, _judge(_with_gang(context(t.namespace, t.pod), t)), source, release,
                                explain_after_seconds, eta_tolerance_seconds))
    return rows


def _event_moments(t: WorkloadTimeline, events: list[Observation]) -> list[Moment]:
    """The platform's scheduling events during ``t``'s wait, each a moment to judge it at (from its release).
    The workloads ahead are kept up to its first look that is not the pipeline's gate: the row reads them there
    only (10,000 waits would otherwise hold as many queues)."""
    out, ahead_read = [], False
    for e in sorted(events, key=lambda e: e.taken_at):
        if e.taken_at >= t.ready_at - _EVENT_SLACK and (t.scheduled_at is None or e.taken_at <= t.scheduled_at):
            out.append(Moment(max(e.taken_at, t.ready_at), t, e, needs_ahead=not ahead_read))
            ahead_read = ahead_read or PIPELINE_GATE not in e.gates
    return out


def _judged_row(t: WorkloadTimeline, looks: list[tuple[Judged, Observation]], judge, source: str,
                release: datetime | None, explain_after: float, eta_tol: float) -> CongestionRow:
    """The row of ``t`` from each look that saw it wait: the cause then, and what the platform said."""
    causes: list[Bottleneck] = []
    texts: list[tuple[str | None, str]] = []
    positions: list[int] = []
    etas: list[datetime] = []
    ahead_at_release: list[WorkloadTimeline] | None = None
    free_at_release: int | None = None
    for (cause, ahead, free), mine in looks:
        if cause is Bottleneck.GATED:
            continue
        if ahead_at_release is None:
            ahead_at_release, free_at_release = ahead, free
        causes.append(cause)
        texts += [(r, x) for r, x in _telling(mine, judge) if not _only_pipeline_gate(mine, x)]
        if mine.position is not None:
            positions.append(mine.position)
        if mine.eta is not None:
            etas.append(mine.eta)
    return _row(t, causes, texts, positions, etas, ahead_at_release or [], free_at_release, explain_after, eta_tol,
                source, _gated_throughout(t, release))


def _judge(ctx: ExplainContext) -> Callable[[str | None, str], bool]:
    """``readable.explains`` in ``ctx``, each (reason, text) judged once: a pod's texts repeat in every
    snapshot."""
    judged: dict[tuple[str | None, str], bool] = {}

    def judge(reason: str | None, text: str) -> bool:
        if (reason, text) not in judged:
            judged[(reason, text)] = explains(reason, text, ctx)
        return judged[(reason, text)]

    return judge


def _telling(o: Observation, judge: Callable[[str | None, str], bool]) -> list[tuple[str | None, str]]:
    """What the platform said of the pod in ``o`` that names a cause: its condition, its latest event, and the
    first of its scheduler's texts that does (the one a user reads first), in that order."""
    told = [(r, x) for r, x in o.pod_said if judge(r, x)]
    first = next(((r, x) for r, x, _ in o.scheduler_said if judge(r, x)), None)
    return told + ([first] if first else [])


def _waiting_snapshots(t: WorkloadTimeline, snaps: list[_Snapshot]) -> list[_Snapshot]:
    """The snapshots in which ``t`` waited: pending, unbound, after its release and before its binding."""
    out = []
    for snap in snaps:
        mine = snap.by_pod.get((t.namespace, t.pod))
        if mine is None or mine.node or mine.phase != "Pending":
            continue
        if t.ready_at and snap.taken_at < t.ready_at:
            continue
        if t.scheduled_at and snap.taken_at >= t.scheduled_at:
            continue
        out.append(snap)
    return out


def _gated_throughout(t: WorkloadTimeline, release: datetime | None) -> bool:
    """An attempt that ended, never released and never scheduled, by the wave's release: the pipeline's gate held
    it all its life (Kueue admits gated pods and may preempt one before the release), so it never waited for
    the platform; its preemption is judged as a preemption (QC-12), not as a wait."""
    return (release is not None and t.released_at is None and t.scheduled_at is None
            and t.finished_at is not None and t.finished_at <= release)


def _only_pipeline_gate(o: Observation, text: str) -> bool:
    """The SchedulingGated message explains only the platform's own gates, not the pipeline's."""
    return "gate" in text.lower() and set(o.gates) <= {PIPELINE_GATE}


def _row(t: WorkloadTimeline, causes: list[Bottleneck], texts: list[tuple[str | None, str]], positions: list[int],
         etas: list[datetime], ahead: list[WorkloadTimeline], free: int | None, explain_after: float,
         eta_tol: float, source: str, gated: bool = False) -> CongestionRow:
    wait = t.wait_seconds
    needs = not gated and ((wait is not None and wait > explain_after)
                           or (t.scheduled_at is None and t.ready_at is not None))
    if causes:
        counts = Counter(causes)
        top = max(counts.values())
        bottleneck = next(c for c in reversed(causes) if counts[c] == top)
    else:
        bottleneck = Bottleneck.UNOBSERVED if needs else Bottleneck.NONE
    if not texts and positions:  # a structured position explains the wait too: where it stands in the queue
        texts = [(POSITION_REASON, f"position {positions[-1]} in its ClusterQueue (visibility API)")]
    told = bool(texts)
    names = None
    if told and bottleneck not in (Bottleneck.NONE, Bottleneck.UNOBSERVED):
        named = set().union(*(classify_message(x) for _, x in texts))
        names = bool(named & NAMED_BY[bottleneck])
    reason, message = texts[-1] if texts else (None, None)
    eta_at = etas[0] if etas else None
    eta_err = None
    if eta_at is not None and t.scheduled_at is not None:
        eta_err = (eta_at - t.scheduled_at).total_seconds()
    observed = bool(causes) or not needs
    return CongestionRow(
        **{f.name: getattr(t, f.name) for f in fields(WorkloadTimeline)},
        needs_explanation=needs, bottleneck=bottleneck.value,
        ahead_at_release=len(ahead), ahead_higher_priority=_higher(ahead, t.priority),
        pool_free_at_release=free, platform_reason=reason, platform_message=message,
        explained=told if needs and observed else None,
        platform_names_bottleneck=names, first_position=positions[0] if positions else None,
        eta_offered=eta_at is not None, eta_at=eta_at, eta_error_seconds=eta_err,
        eta_within_tolerance=None if eta_err is None else abs(eta_err) <= eta_tol,
        explained_from=source if told else None, observed=observed,
    )


def _higher(ahead: list[WorkloadTimeline], priority: int) -> int:
    """How many of ``ahead`` (in queue order: higher priority first, ``bottleneck_at``) outrank ``priority``."""
    return bisect_left(ahead, -priority, key=lambda a: -a.priority)


@dataclass(frozen=True)
class CongestionSummary:
    """Figures the report and the suites read; ratios are None when nothing could be measured."""

    workloads: int
    scheduled: int
    needing_explanation: int
    explained: int
    explained_ratio: float | None
    named_right: int
    named_right_ratio: float | None
    eta_offered: int
    eta_accurate_ratio: float | None
    positions_offered: int
    max_wait_seconds: float | None
    median_wait_seconds: float | None
    over_max_wait: int
    arrival_spread_seconds: float | None
    release_spread_seconds: float | None
    bottlenecks: dict[str, int]
    unobserved: int = 0  # waits that needed an explanation that nothing saw: not judged

    def to_dict(self) -> dict:
        return asdict(self)


def summarize(rows: list[CongestionRow], max_wait_seconds: float) -> CongestionSummary:
    """Coverage of explanations, accuracy of ETAs, waits and the spreads of submission and release."""
    def ratio(num: int, den: int) -> float | None:
        return round(num / den, 4) if den else None

    need = [r for r in rows if r.judged]
    explained = [r for r in need if r.explained]
    judged = [r for r in explained if r.platform_names_bottleneck is not None]
    named = [r for r in judged if r.platform_names_bottleneck]
    eta = [r for r in rows if r.eta_within_tolerance is not None]
    waits = [r.wait_seconds for r in rows if r.wait_seconds is not None]
    return CongestionSummary(
        workloads=len(rows), scheduled=sum(1 for r in rows if r.scheduled_at), needing_explanation=sum(1 for r in rows if r.needs_explanation),
        explained=len(explained), explained_ratio=ratio(len(explained), len(need)), named_right=len(named),
        named_right_ratio=ratio(len(named), len(judged)), eta_offered=sum(1 for r in rows if r.eta_offered),
        eta_accurate_ratio=ratio(sum(1 for r in eta if r.eta_within_tolerance), len(eta)),
        positions_offered=sum(1 for r in rows if r.first_position is not None),
        max_wait_seconds=max(waits) if waits else None,
        median_wait_seconds=statistics.median(waits) if waits else None,
        over_max_wait=sum(1 for w in waits if w > max_wait_seconds)
        + sum(1 for r in rows if r.scheduled_at is None and r.released_at is not None),
        arrival_spread_seconds=_spread([r.submitted_at for r in rows]),
        release_spread_seconds=_spread([r.released_at for r in rows]),
        bottlenecks=dict(Counter(r.bottleneck for r in rows)),
        unobserved=sum(1 for r in rows if r.needs_explanation and not r.observed),
    )


def _spread(moments: list[datetime | None]) -> float | None:
    known = [m for m in moments if m is not None]
    return (max(known) - min(known)).total_seconds() if known else None
