"""Waits judged at their events' moments in one sweep give what the wave rebuilt whole at each moment gives."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from gpupoc.common.constants import PIPELINE_GATE
from gpupoc.pipeline.bottleneck import bottleneck_at, state_at
from gpupoc.pipeline.rebuilt_moments import Moment, judge_moments, timeline_observation, timeline_state
from gpupoc.pipeline.timelines import Capacity, Observation, WorkloadTimeline

T0 = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)
NODES = {"n1": "training", "n2": "training", "n3": "training", "i1": "inference"}


def at(s: float) -> datetime:
    return T0 + timedelta(seconds=s)


def _rebuilt_whole(m: Moment, timelines, cap, gangs_whole):
    """The wave at the moment as its timelines tell it, the event in its pod's place, judged from scratch."""
    key = (m.timeline.namespace, m.timeline.pod)
    obs = [m.event] + [timeline_observation(m.at, t, s) for t in timelines
                       if (t.namespace, t.pod) != key and (s := timeline_state(m.at, t)) is not None]
    return bottleneck_at(m.timeline, m.event, state_at(timelines, obs, cap, gangs_whole), cap)


def _wave(rng: random.Random) -> list[WorkloadTimeline]:
    out = []
    for i in range(rng.randint(1, 40)):
        released = rng.choice([None, 0.0, 0.0, rng.uniform(0, 10)])
        submitted = rng.uniform(-10, 0) if released is not None else rng.uniform(-10, 10)
        ready = released if released is not None else submitted
        scheduled = rng.choice([None, ready + rng.choice([0.0, rng.uniform(0, 30)])])
        finished = rng.choice([None, (scheduled if scheduled is not None else ready) + rng.uniform(0, 30)])
        gang = rng.choice([None, None, "g1", "g2"])
        out.append(WorkloadTimeline(
            workload_key=f"k{i}", pod=rng.choice([f"p{i}", f"p{i}", "dup"]), namespace=rng.choice(["team-a", "team-b"]),
            tenant=rng.choice(["team-a", "team-b"]), pool=rng.choice(["training", "training", "inference"]),
            priority_class="p", priority=rng.choice([0, 100, 1000]), gpus=rng.choice([0, 1, 2, 4, 8]),
            submitted_at=at(submitted), released_at=None if released is None else at(released),
            scheduled_at=None if scheduled is None else at(scheduled),
            finished_at=None if finished is None else at(finished),
            node=rng.choice([None, *NODES]), gang=gang, gang_size=rng.choice([1, 2, 4]) if gang else 1))
    return out


def _moments(rng: random.Random, timelines) -> list[Moment]:
    out = []
    for t in rng.sample(timelines, k=min(len(timelines), rng.randint(1, 15))):
        for _ in range(rng.randint(1, 3)):
            moment = at(rng.choice([0.0, 1.0, 5.0, rng.uniform(-5, 45)]))
            gates = rng.choice([(), (), (PIPELINE_GATE,)])
            node = rng.choice([None, None, None, "n1"])
            out.append(Moment(moment, t, Observation(taken_at=moment, pod=t.pod, namespace=t.namespace, gates=gates,
                                                     node=node, phase="Running" if node else "Pending",
                                                     event_reason="FailedScheduling")))
    return out


def test_each_moment_is_judged_as_in_the_wave_rebuilt_whole_at_that_moment():
    for seed in range(150):
        rng = random.Random(seed)
        cap = Capacity(pool_gpus={"training": rng.choice([8, 16, 24]), "inference": 8},
                       tenant_quota=rng.choice([{}, {"team-a": 8}, {"team-a": 16, "team-b": 4}]),
                       node_gpus={"n1": 8, "n2": 8, "n3": 8, "i1": 8}, node_pool=dict(NODES))
        timelines, gangs_whole = _wave(rng), rng.random() < 0.5
        moments = _moments(rng, timelines)
        swept = judge_moments(moments, timelines, cap, gangs_whole)
        assert swept == [_rebuilt_whole(m, timelines, cap, gangs_whole) for m in moments], seed


def test_the_workloads_ahead_are_left_out_where_they_are_not_read():
    cap = Capacity(pool_gpus={"training": 4})
    first = WorkloadTimeline(workload_key="a", pod="a", namespace="ns", tenant="t", pool="training", priority_class="p",
                             priority=100, gpus=4, submitted_at=at(-1), released_at=at(0), scheduled_at=at(9))
    later = WorkloadTimeline(workload_key="b", pod="b", namespace="ns", tenant="t", pool="training", priority_class="p",
                             priority=0, gpus=4, submitted_at=at(-1), released_at=at(0), scheduled_at=None)
    e = Observation(taken_at=at(1), pod="b", namespace="ns")
    kept, left = judge_moments([Moment(at(1), later, e), Moment(at(2), later, e, needs_ahead=False)],
                               [first, later], cap)
    assert kept[1] == [first] and left[1] == [] and kept[0] == left[0]
