"""Condition transitions and start-up latency as kube-burner computes them; the token bucket's pace."""

from __future__ import annotations

import asyncio

import pytest

from gpupoc.pipeline.bulk_rate import TokenBucket
from gpupoc.pipeline.pod_transitions import (
    PodTransitions,
    latency_rows,
    nearest_rank,
    scheduling_throughput,
)


def state(created="2026-12-01T10:00:00Z", released=None, **conds) -> dict:
    ann = {"gpupoc.io/released-at": released} if released else {}
    return {"metadata": {"name": "p", "namespace": "ns", "creationTimestamp": created, "annotations": ann},
            "spec": {"nodeName": "n1"}, "status": {"phase": "Running", "conditions": [
                {"type": k, "status": v[0], "lastTransitionTime": v[1]} for k, v in conds.items()]}}


def test_the_first_true_transition_is_kept_when_a_later_state_overwrites_it():
    t = PodTransitions("ns", "p", "i")
    t.observe(state(PodScheduled=("True", "2026-12-01T10:00:02Z"), Ready=("True", "2026-12-01T10:00:05Z")))
    t.observe(state(PodScheduled=("True", "2026-12-01T10:00:02Z"), Ready=("False", "2026-12-01T10:00:09Z")))
    assert t.latency_ms("Ready") == 5000, "the Ready=True moment was lost to the later Ready=False"
    assert PodTransitions.from_dict(t.to_dict()).latency_ms("Ready") == 5000


def test_latency_starts_at_the_release_of_a_gated_pod_and_never_goes_negative():
    t = PodTransitions("ns", "p", "i")
    t.observe(state(released="2026-12-01T10:01:00Z", PodScheduled=("True", "2026-12-01T10:01:01Z"),
                    Ready=("True", "2026-12-01T10:00:59Z")))
    assert t.latency_ms("PodScheduled") == 1000 and t.latency_ms("Ready") == 0


def test_quantiles_are_nearest_rank_over_pods_that_became_ready():
    assert nearest_rank(list(range(1, 101)), 0.5) == 50 and nearest_rank(list(range(1, 101)), 0.99) == 99
    assert nearest_rank([7], 0.95) == 7 and nearest_rank([], 0.5) is None
    pods = []
    for i in range(10):
        t = PodTransitions("ns", f"p{i}", f"i{i}")
        t.observe(state(PodScheduled=("True", f"2026-12-01T10:00:{i:02d}Z"),
                        Ready=("True", f"2026-12-01T10:00:{i + 1:02d}Z")))
        pods.append(t)
    never = PodTransitions("ns", "late", "x")
    never.observe(state(PodScheduled=("True", "2026-12-01T10:00:30Z")))
    rows = {r["condition"]: r for r in latency_rows(pods + [never], "queue_congestion")}
    assert rows["PodScheduled"]["pods"] == 10 and rows["PodScheduled"]["pods_seen"] == 11
    assert rows["PodScheduled"]["p50_ms"] == 4000 and rows["Ready"]["p99_ms"] == 10000
    assert rows["Initialized"]["pods"] == 0 and rows["Initialized"]["p50_ms"] is None
    tp = scheduling_throughput(pods + [never])
    assert tp["pods_scheduled"] == 11 and tp["span_seconds"] == 30.0 and tp["pods_per_second"] == round(11 / 30, 3)


def test_the_bucket_lets_a_burst_through_then_paces_at_qps():
    now = [0.0]
    slept: list[float] = []

    async def sleep(s):
        slept.append(s)
        now[0] += s

    bucket = TokenBucket(qps=10, burst=3, clock=lambda: now[0], sleep=sleep)

    async def take(n):
        for _ in range(n):
            await bucket.acquire()

    asyncio.run(take(5))
    assert slept == pytest.approx([0.1, 0.1]), "three at once, then one every 1/qps"
    with pytest.raises(ValueError, match="burst"):
        TokenBucket(qps=1, burst=0)


def waiting(reason="Unschedulable", message="0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
            at="2026-12-01T10:01:03Z") -> dict:
    s = state(released="2026-12-01T10:01:00Z")
    s["spec"], s["status"]["phase"] = {}, "Pending"
    s["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": reason, "message": message,
                                  "lastTransitionTime": at}]
    return s


def test_the_watch_keeps_each_new_word_of_the_platform_about_a_wait_but_not_the_gate():
    t = PodTransitions("ns", "p", "i")
    t.observe(waiting("SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates"))
    t.observe(waiting())
    t.observe(waiting(at="2026-12-01T10:01:04Z"))  # the same word again
    t.observe(waiting(message="0/2 nodes are available: 2 node(s) had untolerated taint."))
    assert [(r, m.split(": ")[1]) for _, r, m in t.said] == [("Unschedulable", "2 Insufficient nvidia.com/gpu."),
                                                             ("Unschedulable", "2 node(s) had untolerated taint.")]
    t.relisted_waiting = True
    back = PodTransitions.from_dict(t.to_dict())
    assert back.said == t.said and back.relisted_waiting


def scheduled_after(seconds: int, said: bool = False, relisted: bool = False) -> PodTransitions:
    t = PodTransitions("ns", f"p{seconds}", "i")
    if said:
        t.observe(waiting())
    t.observe(state(released="2026-12-01T10:01:00Z", PodScheduled=("True", f"2026-12-01T10:01:{seconds:02d}Z")))
    t.relisted_waiting = relisted
    return t


def test_a_wait_the_watch_followed_whole_is_looked_at_once_it_needs_an_explanation():
    from gpupoc.pipeline.pod_transitions import watch_looks

    pods = [scheduled_after(3), scheduled_after(20), scheduled_after(20, said=True),
            scheduled_after(30, relisted=True)]
    looks = watch_looks(pods, 5.0, silence_counts=True)
    assert sorted((o.pod, o.taken_at.second, o.reason) for o in looks) == [
        ("p20", 3, "Unschedulable"), ("p20", 5, None), ("p20", 5, None)], \
        "a short wait needs no look; a re-listed watch may have missed a word: no silent look"
    assert [o.reason for o in watch_looks(pods, 5.0, silence_counts=False)] == ["Unschedulable"], \
        "where the platform explains in objects the watch does not see, only its words count"
