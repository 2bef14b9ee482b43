"""The expected wait: the queue at release replayed with the plan's durations, in priority order."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from gpupoc.pipeline.queue_model import expected_waits
from gpupoc.pipeline.timelines import WorkloadTimeline

T0 = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)


def wl(pod, gpus, priority, pool="training", ready=0.0):
    return WorkloadTimeline(workload_key=pod, pod=pod, namespace="ns", tenant="t", pool=pool, priority_class="p",
                            priority=priority, gpus=gpus, submitted_at=T0, released_at=T0 + timedelta(seconds=ready))


def test_higher_priority_runs_first_and_the_rest_wait_for_the_gpus_it_frees():
    tl = [wl("low", 4, 100), wl("high", 8, 1000), wl("mid", 4, 500)]
    w = expected_waits(tl, {"low": 30, "high": 20, "mid": 10}, {"training": 8})
    assert w == {("ns", "high"): 0.0, ("ns", "mid"): 20.0, ("ns", "low"): 20.0}


def test_when_gpus_free_up_every_waiting_workload_that_fits_starts():
    tl = [wl("big", 8, 1000), wl("held", 6, 500), wl("small", 2, 100)]
    w = expected_waits(tl, {"big": 10, "held": 10, "small": 5}, {"training": 8})
    assert w[("ns", "big")] == 0 and w[("ns", "held")] == 10 and w[("ns", "small")] == 10


def test_pools_are_independent_and_a_workload_larger_than_its_pool_has_no_estimate():
    tl = [wl("a", 4, 1, pool="inference"), wl("huge", 16, 1)]
    w = expected_waits(tl, {"a": 5, "huge": 5}, {"training": 8, "inference": 4})
    assert w == {("ns", "a"): 0.0}


def test_a_later_arrival_waits_from_its_own_ready_time():
    tl = [wl("first", 8, 1), wl("later", 8, 1, ready=5)]
    assert expected_waits(tl, {"first": 20, "later": 1}, {"training": 8})[("ns", "later")] == 15.0


def _replayed_naively(timelines, durations, pool_gpus):
    """The queue model as its definition reads: at each moment, scan the whole queue in serving order."""
    out = {}
    for pool, gpus in pool_gpus.items():
        ready = [t for t in timelines if t.pool == pool and t.ready_at is not None]
        if not ready:
            continue
        t0 = min(t.ready_at for t in ready)
        s = lambda at: (at - t0).total_seconds()  # noqa: E731
        waiting = sorted(ready, key=lambda t: (-t.priority, s(t.ready_at), s(t.submitted_at or t.ready_at), t.pod))
        running, now = [], 0.0
        while waiting:
            running = [(end, g) for end, g in running if end > now]
            free = gpus - sum(g for _, g in running)
            for t in list(waiting):
                if s(t.ready_at) <= now and t.gpus <= free:
                    out[(t.namespace, t.pod)] = now - s(t.ready_at)
                    running.append((now + float(durations.get(t.workload_key, 0.0)), t.gpus))
                    free -= t.gpus
                    waiting.remove(t)
            upcoming = [end for end, _ in running if end > now] + [s(t.ready_at) for t in waiting if s(t.ready_at) > now]
            if not waiting or not upcoming:
                break
            now = min(upcoming)
    return out


def test_the_served_queue_matches_the_queue_scanned_whole_at_every_moment():
    import random

    for seed in range(60):
        rng = random.Random(seed)
        pools = {"training": rng.choice([4, 8, 16]), "inference": rng.choice([1, 2, 8])}
        timelines = [wl(f"p{i}", rng.choice([0, 1, 1, 2, 4, 8, 20]), rng.choice([0, 100, 1000]),
                        pool=rng.choice(list(pools)), ready=rng.choice([0.0, 0.0, 1.5, 3.0, rng.uniform(0, 30)]))
                     for i in range(rng.randint(1, 60))]
        durations = {t.workload_key: rng.choice([0.0, 2.0, 5.0, rng.uniform(0, 20)]) for t in timelines
                     if rng.random() < 0.9}
        assert expected_waits(timelines, durations, pools) == _replayed_naively(timelines, durations, pools), seed
