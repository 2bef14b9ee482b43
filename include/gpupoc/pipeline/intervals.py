"""Who held GPUs and who waited, second by second: the attempts' timelines cut into segments.

Every moment an attempt was released, placed or ended is a boundary; between two boundaries nothing
changed, so each segment says exactly which attempts held GPUs and which waited. ``gangs`` and
``fair_share`` sum over these segments. Pure functions over ``WorkloadTimeline``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gpupoc.pipeline.timelines import WorkloadTimeline


def hold_interval(t: WorkloadTimeline, end: datetime) -> tuple[datetime, datetime] | None:
    """When the attempt held its GPUs: from its placement to its end (or ``end`` if it had not ended)."""
    if t.scheduled_at is None:
        return None
    stop = t.finished_at or end
    return (t.scheduled_at, max(stop, t.scheduled_at))


def wait_interval(t: WorkloadTimeline, end: datetime) -> tuple[datetime, datetime] | None:
    """When the attempt waited: from its release to its placement (or to its end if it never got placed)."""
    if t.ready_at is None:
        return None
    stop = t.scheduled_at or t.finished_at or end
    return (t.ready_at, max(stop, t.ready_at)) if stop > t.ready_at else None


@dataclass(frozen=True)
class Segment:
    """A stretch of time in which no attempt was released, placed or ended."""

    start: datetime
    end: datetime
    holding: tuple[WorkloadTimeline, ...]
    waiting: tuple[WorkloadTimeline, ...]
    progress_at_start: bool  # an attempt was placed or ended at ``start``

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


def _inside(span: tuple[datetime, datetime] | None, a: datetime, b: datetime) -> bool:
    return span is not None and span[0] <= a and b <= span[1] and span[0] < span[1]


def segments(timelines: list[WorkloadTimeline], end: datetime) -> list[Segment]:
    """The segments from the first release to ``end`` (attempts without any moment are left out)."""
    moments: set[datetime] = {end}
    progress: set[datetime] = set()
    spans = []
    for t in timelines:
        held, waited = hold_interval(t, end), wait_interval(t, end)
        spans.append((t, held, waited))
        for span in (held, waited):
            if span:
                moments.update(m for m in span if m <= end)
        for m in (t.scheduled_at, t.finished_at):
            if m is not None:
                progress.add(m)
    starts = [t.ready_at for t in timelines if t.ready_at is not None]
    if not starts:
        return []
    first = min(starts)
    cuts = sorted(m for m in moments if first <= m <= end)
    out = []
    for a, b in zip(cuts, cuts[1:]):
        holding = tuple(t for t, held, _ in spans if _inside(held, a, b))
        waiting = tuple(t for t, _, waited in spans if _inside(waited, a, b))
        out.append(Segment(a, b, holding, waiting, a in progress))
    return out
