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
