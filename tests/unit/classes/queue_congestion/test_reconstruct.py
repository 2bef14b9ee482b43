"""Bottleneck reconstruction and the scoring of the platform's explanations."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

from gpupoc.classes.queue_congestion.reconstruct import POSITION_REASON, reconstruct, summarize
from gpupoc.common.constants import PIPELINE_GATE
from gpupoc.pipeline.bottleneck import Bottleneck
from gpupoc.pipeline.readable import ClusterNames, ExplainContext, PodRefs
from gpupoc.pipeline.timelines import Capacity, Observation, WorkloadTimeline

T0 = datetime(2026, 3, 2, 9, 0, 0, tzinfo=timezone.utc)
FAILED = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: " \
         "1 No preemption victims found for incoming pod.."


def at(s: float) -> datetime:
    return T0 + timedelta(seconds=s)


def wl(pod: str, gpus: int = 4, priority: int = 1000, tenant: str = "team-a", pool: str = "training",
       submitted: float = -10, released: float | None = 0, scheduled: float | None = 1, **kw) -> WorkloadTimeline:
    return WorkloadTimeline(
        workload_key=pod, pod=pod, namespace=tenant, tenant=tenant, pool=pool, priority_class="p",
        priority=priority, gpus=gpus, submitted_at=at(submitted), released_at=None if released is None else at(released),
        scheduled_at=None if scheduled is None else at(scheduled), **kw)


def ob(t: float, pod: str, tenant: str = "team-a", node: str | None = None, phase: str | None = None, **kw):
    return Observation(taken_at=at(t), pod=pod, namespace=tenant, node=node,
                       phase=phase or ("Running" if node else "Pending"), **kw)


ONE_NODE = Capacity(pool_gpus={"training": 8}, tenant_quota={"team-a": 100, "team-b": 100},
                    node_gpus={"n1": 8}, node_pool={"n1": "training"})


def three_of_four(message: str | None = FAILED, eta: datetime | None = None):
    """Three 4-GPU pods on an 8-GPU pool: two run at once, the third waits 30 s for the first to end."""
    tl = [wl("a"), wl("b"), wl("c", scheduled=31)]
    obs = []
    for t in (3, 6, 9, 30):
        obs += [ob(t, "a", node="n1"), ob(t, "b", node="n1"),
                ob(t, "c", reason="Unschedulable" if message else None, message=message, eta=eta)]
    return tl, obs


def row(rows, pod):
    return next(r for r in rows if r.pod == pod)


def test_waiting_for_gpus_in_a_full_pool_is_insufficient_gpus_and_the_failed_scheduling_message_names_it():
    tl, obs = three_of_four()
    rows = reconstruct(tl, obs, ONE_NODE)
    c = row(rows, "c")
    assert c.wait_seconds == 31
    assert c.needs_explanation
    assert c.bottleneck == Bottleneck.INSUFFICIENT_GPUS.value
    assert c.pool_free_at_release == 0
    assert c.explained and c.platform_names_bottleneck is True
    assert c.platform_message == FAILED
    assert not row(rows, "a").needs_explanation


def test_a_wait_without_any_reason_or_message_counts_as_unexplained():
    tl, obs = three_of_four(message=None)
    rows = reconstruct(tl, obs, ONE_NODE)
    s = summarize(rows, max_wait_seconds=60)
    assert row(rows, "c").explained is False
    assert row(rows, "c").platform_names_bottleneck is None
    assert (s.needing_explanation, s.explained, s.explained_ratio) == (1, 0, 0.0)


def test_quota_exhausted_is_told_apart_from_missing_gpus_and_a_gpu_message_is_scored_wrong():
    cap = Capacity(pool_gpus={"training": 16}, tenant_quota={"team-a": 4}, node_gpus={"n1": 16},
                   node_pool={"n1": "training"})
    tl = [wl("a"), wl("b", scheduled=21)]
    obs = [x for t in (3, 6, 12) for x in (ob(t, "a", node="n1"), ob(t, "b", message=FAILED))]
    b = row(reconstruct(tl, obs, cap), "b")
    assert b.bottleneck == Bottleneck.QUOTA.value
    assert b.explained and b.platform_names_bottleneck is False


def test_enough_free_gpus_spread_over_nodes_is_fragmentation():
    cap = Capacity(pool_gpus={"training": 8}, node_gpus={"n1": 4, "n2": 4}, node_pool={"n1": "training", "n2": "training"})
    tl = [wl("x", gpus=2), wl("y", gpus=2), wl("big", gpus=4, scheduled=40)]
    obs = [o for t in (3, 9) for o in (ob(t, "x", node="n1"), ob(t, "y", node="n2"), ob(t, "big", message=FAILED))]
    big = row(reconstruct(tl, obs, cap), "big")
    assert big.pool_free_at_release == 4
    assert big.bottleneck == Bottleneck.FRAGMENTATION.value
    assert big.platform_names_bottleneck is True


def test_a_pod_that_fits_but_waits_behind_higher_priority_work_is_behind_queue():
    cap = Capacity(pool_gpus={"training": 8}, node_gpus={"n1": 8}, node_pool={"n1": "training"})
    tl = [wl("run", gpus=6), wl("urgent", gpus=4, priority=10000, scheduled=40), wl("small", gpus=2, scheduled=41)]
    obs = [o for t in (3, 9) for o in (ob(t, "run", node="n1"), ob(t, "urgent", message=FAILED),
                                        ob(t, "small", message="waiting: position 2 in the queue", position=2))]
    small = row(reconstruct(tl, obs, cap), "small")
    assert small.bottleneck == Bottleneck.BEHIND_QUEUE.value
    assert (small.ahead_at_release, small.ahead_higher_priority) == (1, 1)
    assert small.first_position == 2
    assert small.platform_names_bottleneck is True


def test_snapshots_before_release_and_the_pipeline_gate_message_are_not_the_platforms_explanation():
    tl = [wl("a"), wl("b"), wl("c", released=10, scheduled=40)]
    gated = ("SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")
    obs = [ob(5, "c", gates=(PIPELINE_GATE,), reason=gated[0], message=gated[1]),
           ob(12, "a", node="n1"), ob(12, "b", node="n1"), ob(12, "c")]
    c = row(reconstruct(tl, obs, ONE_NODE), "c")
    assert c.wait_seconds == 30
    assert c.bottleneck == Bottleneck.INSUFFICIENT_GPUS.value
    assert c.explained is False


def test_an_eta_is_scored_against_the_actual_scheduling_moment():
    tl, obs = three_of_four(eta=at(36))
    c = row(reconstruct(tl, obs, ONE_NODE, eta_tolerance_seconds=10), "c")
    assert c.eta_offered and c.eta_error_seconds == 5 and c.eta_within_tolerance is True
    c = row(reconstruct(tl, obs, ONE_NODE, eta_tolerance_seconds=2), "c")
    assert c.eta_within_tolerance is False


def test_summary_counts_spreads_and_never_scheduled_workloads_as_over_the_wait_limit():
    tl = [wl("a", submitted=-30), wl("b", submitted=-2, released=0.4), wl("c", scheduled=None)]
    obs = [ob(3, "a", node="n1"), ob(3, "b", node="n1"), ob(3, "c", message=FAILED)]
    rows = reconstruct(tl, obs, ONE_NODE)
    s = summarize(rows, max_wait_seconds=20)
    assert s.arrival_spread_seconds == 28
    assert s.release_spread_seconds == 0.4
    assert s.over_max_wait == 1
    assert row(rows, "c").needs_explanation and row(rows, "c").explained
    assert s.eta_offered == 0 and s.eta_accurate_ratio is None
    assert s.bottlenecks[Bottleneck.INSUFFICIENT_GPUS.value] == 1


def test_a_long_wait_with_no_snapshot_is_unobserved_and_left_unjudged():
    rows = reconstruct([wl("a", scheduled=60)], [], ONE_NODE)
    assert rows[0].bottleneck == Bottleneck.UNOBSERVED.value and rows[0].explained is None, \
        "a wait nothing saw is neither explained nor unexplained"
    assert rows[0].needs_explanation and not rows[0].observed and not rows[0].judged


def test_an_unobserved_wait_is_counted_apart_and_left_out_of_the_explained_share():
    tl = [wl("a", finished_at=at(30)), wl("b", finished_at=at(30)), wl("c", scheduled=31), wl("d", scheduled=31)]
    obs = [ob(t, p, node="node-a", phase="Running") for t in (5, 10) for p in ("a", "b")]
    obs += [ob(t, "c", message=FAILED) for t in (5, 10)]  # d was never in a snapshot, and no event names it
    rows = reconstruct(tl, obs, ONE_NODE)
    assert row(rows, "c").observed and row(rows, "c").judged and not row(rows, "d").observed
    s = summarize(rows, 600)
    assert (s.needing_explanation, s.explained, s.explained_ratio, s.unobserved) == (2, 1, 1.0, 1)


def test_a_wait_no_snapshot_saw_is_judged_from_the_platforms_scheduling_events():
    # a and b hold the 8-GPU node until 30 s; c waits from its release at 0 to 31 s; the observer saw nothing
    tl = [wl("a", finished_at=at(30)), wl("b", finished_at=at(30)), wl("c", scheduled=31)]
    events = [Observation(taken_at=at(2), pod="c", namespace="team-a", event_reason="FailedScheduling",
                          event_message=FAILED),
              Observation(taken_at=at(25), pod="c", namespace="team-a", event_reason="FailedScheduling",
                          event_message=FAILED),
              Observation(taken_at=at(40), pod="c", namespace="team-a", event_reason="FailedScheduling",
                          event_message="after it was bound: not part of the wait")]
    r = row(reconstruct(tl, [], ONE_NODE, events=events), "c")
    assert r.needs_explanation and r.explained and r.explained_from == "events"
    assert r.bottleneck == Bottleneck.INSUFFICIENT_GPUS.value and r.platform_names_bottleneck is True
    assert r.platform_message == FAILED and r.pool_free_at_release == 0


def test_a_stale_look_that_still_shows_the_pipelines_gate_after_the_release_leaves_the_wait_to_the_events():
    # a list of thousands of pods answers late: the observer's look at 5 s shows c still gated, after its release
    # at 0; the platform's FailedScheduling event at 12 s saw the wait
    tl = [wl("a", finished_at=at(30)), wl("b", finished_at=at(30)), wl("c", scheduled=31)]
    stale = [ob(5, "c", gates=(PIPELINE_GATE,), reason="SchedulingGated", message="blocked by scheduling gates")]
    events = [Observation(taken_at=at(12), pod="c", namespace="team-a", event_reason="FailedScheduling",
                          event_message=FAILED)]
    assert not row(reconstruct(tl, stale, ONE_NODE), "c").observed, "the stale look alone sees no wait"
    r = row(reconstruct(tl, stale, ONE_NODE, events=events), "c")
    assert r.observed and r.explained_from == "events" and r.bottleneck == Bottleneck.INSUFFICIENT_GPUS.value


def test_a_watchs_silent_look_makes_a_wait_no_snapshot_saw_observed_and_unexplained_unless_the_platform_spoke():
    tl = [wl("a", finished_at=at(30)), wl("b", finished_at=at(30)), wl("c", scheduled=31)]
    silent = Observation(taken_at=at(5), pod="c", namespace="team-a")  # pod_transitions.watch_looks
    r = row(reconstruct(tl, [], ONE_NODE, events=[silent]), "c")
    assert r.observed and r.judged and not r.explained
    assert r.bottleneck == Bottleneck.INSUFFICIENT_GPUS.value
    word = Observation(taken_at=at(2), pod="c", namespace="team-a", reason="Unschedulable", message=FAILED)
    r = row(reconstruct(tl, [], ONE_NODE, events=[silent, word]), "c")
    assert r.observed and r.explained and r.platform_names_bottleneck is True


def test_events_outside_the_wait_or_of_another_pod_do_not_explain_it():
    tl = [wl("a", finished_at=at(30)), wl("b", finished_at=at(30)), wl("c", scheduled=31)]
    events = [Observation(taken_at=at(-5), pod="c", namespace="team-a", event_reason="FailedScheduling",
                          event_message=FAILED),
              Observation(taken_at=at(10), pod="b", namespace="team-a", event_reason="FailedScheduling",
                          event_message=FAILED)]
    r = row(reconstruct(tl, [], ONE_NODE, events=events), "c")
    assert r.needs_explanation and not r.explained and r.explained_from is None
    assert r.bottleneck == Bottleneck.UNOBSERVED.value


def test_snapshots_take_precedence_over_events_when_the_observer_saw_the_wait():
    tl, obs = three_of_four()
    events = [Observation(taken_at=at(5), pod="c", namespace="team-a", event_reason="FailedScheduling",
                          event_message="0/1 nodes are available: 1 node(s) had untolerated taint")]
    r = row(reconstruct(tl, obs, ONE_NODE, events=events), "c")
    assert r.explained_from == "snapshots" and r.platform_message == FAILED


def test_the_platforms_own_gate_and_placeholders_are_no_explanation_but_the_schedulers_object_is():
    """Kueue keeps its pods ``SchedulingGated`` until admission: only the Workload's message explains the wait."""
    tl = [wl("a"), wl("b"), wl("c", released=10, scheduled=40)]
    gate = ("SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")
    quota = "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor f, 4 more needed"
    waits = [ob(12, "a", node="n1"), ob(12, "b", node="n1")]
    gated = waits + [ob(12, "c", gates=("kueue.x-k8s.io/admission",), reason=gate[0], message=gate[1]),
                     ob(15, "c", reason="Unschedulable", message="0/1 nodes are available.")]
    assert row(reconstruct(tl, gated, ONE_NODE), "c").explained is False
    told = waits + [ob(12, "c", gates=("kueue.x-k8s.io/admission",), reason=gate[0], message=gate[1],
                       scheduler_said=(("Pending", quota, "Workload team-a/c condition QuotaReserved"),))]
    c = row(reconstruct(tl, told, ONE_NODE), "c")
    assert c.explained is True and (c.platform_reason, c.platform_message) == ("Pending", quota)
    assert c.platform_names_bottleneck is True



def test_the_first_of_the_schedulers_texts_that_names_a_cause_is_the_one_judged_explaining():
    """A PodGroup's texts come in the order a user reads them; a placeholder before the telling one is passed
    over, and only the telling one is kept (a later one would add causes the user did not read first)."""
    tl, obs = three_of_four(None)
    vague = ("Unschedulable", "Unable to schedule podgroup", "PodGroup team-a/g condition Unschedulable")
    quota = ("Unschedulable", "queue resource quota insufficient: insufficient nvidia.com/gpu",
             "PodGroup team-a/g event Unschedulable")
    nodes = ("FailedScheduling", FAILED, "PodGroup team-a/g event FailedScheduling")  # explains too, read later
    said = [replace(o, scheduler_said=(vague, quota, nodes)) if o.pod == "c" else o for o in obs]
    c = row(reconstruct(tl, said, ONE_NODE), "c")
    assert c.explained is True and (c.platform_reason, c.platform_message) == quota[:2]
    only_vague = [replace(o, scheduler_said=(vague,)) if o.pod == "c" else o for o in obs]
    assert row(reconstruct(tl, only_vague, ONE_NODE), "c").explained is False


def test_a_podgroup_message_counts_a_gang_only_as_large_as_the_gang_is():
    message = "Not enough valid tasks for gang-scheduling, valid: 1, min: 4"
    for size, told in ((4, True), (2, False)):
        tl = [wl(f"g{i}", gpus=4, scheduled=31, gang="g", gang_size=size) for i in range(size)]
        tl = [wl("a", gpus=8, scheduled=0)] + tl
        obs = [ob(t, "a", node="n1") for t in (3, 6)] + [
            ob(t, f"g{i}", scheduler_said=(("NotEnoughTasks", message, "PodGroup team-a/g condition Unschedulable"),))
            for t in (3, 6) for i in range(size)]
        assert row(reconstruct(tl, obs, ONE_NODE), "g0").explained is told, size


def test_a_vague_message_in_any_language_leaves_a_wait_unexplained():
    for vague in ("Pod is pending.", "调度中", "Job queued"):
        tl, obs = three_of_four(vague)
        c = row(reconstruct(tl, obs, ONE_NODE), "c")
        assert c.needs_explanation and c.explained is False, vague
    tl, obs = three_of_four("0/1 个节点可用：1 个节点 nvidia.com/gpu 不足。")
    assert row(reconstruct(tl, obs, ONE_NODE), "c").explained is True


def test_what_a_message_names_is_judged_in_the_pods_context():
    tl, obs = three_of_four("waiting for lq-7")
    assert row(reconstruct(tl, obs, ONE_NODE), "c").explained is False  # a name unknown to the cluster
    named = ExplainContext(PodRefs("team-a", "c"), ClusterNames(queues=frozenset({"lq-7"})))
    c = row(reconstruct(tl, obs, ONE_NODE, context=lambda ns, pod: named), "c")
    assert c.explained is True and c.platform_message == "waiting for lq-7"


def test_a_queue_position_from_the_visibility_api_explains_a_gated_wait():
    tl = [wl("a"), wl("b"), wl("c", released=10, scheduled=40)]
    gate = ("SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")
    obs = [ob(12, "a", node="n1"), ob(12, "b", node="n1"),
           ob(12, "c", gates=("kueue.x-k8s.io/admission",), reason=gate[0], message=gate[1], position=2)]
    c = row(reconstruct(tl, obs, ONE_NODE), "c")
    assert c.explained is True and c.platform_reason == POSITION_REASON and "position 2" in c.platform_message

GANG_MSG = "pod group is not ready, 1 Pending, 4 minAvailable; Pending: 1 Unschedulable"


def _gang_of_four_beside_three_free(quota: int = 100):
    """A 5-GPU job runs on an 8-GPU node; a gang of four 1-GPU pods needs 4 GPUs at once and waits 30 s."""
    cap = Capacity(pool_gpus={"training": 8}, tenant_quota={"team-a": quota}, node_gpus={"n1": 8},
                   node_pool={"n1": "training"})
    tl = [wl("job", gpus=5, tenant="team-b")] + [wl(f"g{i}", gpus=1, scheduled=31, gang="g", gang_size=4)
                                                 for i in range(4)]
    obs = [o for t in (3, 9, 20) for o in (ob(t, "job", tenant="team-b", node="n1"),
                                            *(ob(t, f"g{i}", message=GANG_MSG) for i in range(4)))]
    return cap, tl, obs


def test_a_gang_waiting_beside_fewer_free_gpus_than_its_members_need_waits_for_gpus():
    cap, tl, obs = _gang_of_four_beside_three_free()
    rows = [row(reconstruct(tl, obs, cap), f"g{i}") for i in range(4)]
    assert {r.bottleneck for r in rows} == {Bottleneck.INSUFFICIENT_GPUS.value}, "3 free GPUs, the gang needs 4"
    assert all(r.pool_free_at_release == 3 and r.platform_names_bottleneck for r in rows)
    alone = [t if t.pod != "g0" else wl("g0", gpus=1, scheduled=31) for t in tl if t.pod in ("job", "g0")]
    single = row(reconstruct(alone, [o for o in obs if o.pod in ("job", "g0")], cap), "g0")
    assert single.bottleneck != Bottleneck.INSUFFICIENT_GPUS.value, "one 1-GPU pod fits beside 3 free GPUs"


def test_a_gangs_quota_counts_every_member_not_yet_placed():
    cap, tl, obs = _gang_of_four_beside_three_free(quota=3)
    assert row(reconstruct(tl, obs, cap), "g1").bottleneck == Bottleneck.QUOTA.value


def test_members_already_placed_leave_only_the_rest_of_the_gang_to_place():
    """One GPU free both times: two members left to place wait for GPUs, the last member alone does not."""
    cap, tl, obs = _gang_of_four_beside_three_free()

    def placed(members, job_gpus):
        timelines = [wl("job", gpus=job_gpus, tenant="team-b") if t.pod == "job" else t for t in tl]
        seen = [o for o in obs if o.pod not in members] + [ob(t, p, node="n1") for t in (3, 9, 20) for p in members]
        return reconstruct(timelines, seen, cap)

    assert row(placed(("g0", "g1"), job_gpus=5), "g2").bottleneck == Bottleneck.INSUFFICIENT_GPUS.value
    last = row(placed(("g0", "g1", "g2"), job_gpus=4), "g3")
    assert last.pool_free_at_release == 1 and last.bottleneck != Bottleneck.INSUFFICIENT_GPUS.value


def test_a_gang_whose_pods_fit_in_the_pool_but_not_on_its_nodes_is_fragmentation():
    """Free GPUs 3 + 2 + 2: a gang of two 3-GPU pods fits the pool's 7 but only one of its pods fits a node."""
    nodes = ("n1", "n2", "n3")
    cap = Capacity(pool_gpus={"training": 12}, node_gpus=dict.fromkeys(nodes, 4), node_pool=dict.fromkeys(nodes, "training"))
    tl = [wl("x", gpus=1), wl("y", gpus=2), wl("z", gpus=2)] + [
        wl(f"g{i}", gpus=3, scheduled=31, gang="g", gang_size=2) for i in range(2)]
    obs = [o for t in (3, 9) for o in (ob(t, "x", node="n1"), ob(t, "y", node="n2"), ob(t, "z", node="n3"),
                                        *(ob(t, f"g{i}", message=GANG_MSG) for i in range(2)))]
    g = row(reconstruct(tl, obs, cap), "g0")
    assert g.pool_free_at_release == 7 and g.bottleneck == Bottleneck.FRAGMENTATION.value
    alone = [t for t in tl if t.pod != "g1"]
    alone = [wl("g0", gpus=3, scheduled=31) if t.pod == "g0" else t for t in alone]
    assert row(reconstruct(alone, [o for o in obs if o.pod != "g1"], cap), "g0").bottleneck == Bottleneck.NONE.value


def test_under_kube_scheduler_a_gangs_pod_asks_only_for_its_own_gpus():
    """kube-scheduler places a gang's pods one by one: the gang's demand is no bottleneck of a single pod."""
    cap, tl, obs = _gang_of_four_beside_three_free()
    assert row(reconstruct(tl, obs, cap, gangs_whole=False), "g0").bottleneck != Bottleneck.INSUFFICIENT_GPUS.value


def _events_only_wave():
    """Eight 4-GPU pods on two 8-GPU nodes, released together at 0 s: four placed at once, the others waiting
    for them (placed 20-35 s), one still queued at the end; no snapshot saw anything, the scheduler's events
    did (at the release, at 5 s and at each pod's binding: the moment it no longer waited)."""
    cap = Capacity(pool_gpus={"training": 16}, tenant_quota={"team-a": 100}, node_gpus={"n1": 8, "n2": 8},
                   node_pool={"n1": "training", "n2": "training"})
    placed = {"p0": 0, "p1": 0, "p2": 0, "p3": 0, "p4": 20, "p5": 20, "p6": 35, "p7": None}
    tl = [wl(p, priority=1000 - i, scheduled=s, node=None if s is None else f"n{1 + i % 2}",
             finished_at=None if s is None else at(s + 20)) for i, (p, s) in enumerate(placed.items())]
    events = [Observation(taken_at=at(moment), pod=p, namespace="team-a", event_reason="FailedScheduling",
                          event_message=FAILED)
              for p, s in placed.items() if s != 0 for moment in (0, 5, *(() if s is None else (s,)))]
    return tl, events, cap


def test_waits_judged_from_events_are_judged_in_the_wave_as_its_timelines_tell_it_at_each_event():
    tl, events, cap = _events_only_wave()
    rows = reconstruct(tl, [], cap, events=events)
    assert {r.pod for r in rows if r.explained_from == "events"} == {"p4", "p5", "p6", "p7"}
    # at the release the four placed pods hold all 16 GPUs: the others wait for GPUs, behind the higher ones
    assert {r.pod: (r.bottleneck, r.pool_free_at_release, r.ahead_at_release) for r in rows if r.pod >= "p4"} == {
        "p4": ("insufficient_gpus", 0, 0), "p5": ("insufficient_gpus", 0, 1), "p6": ("insufficient_gpus", 0, 2),
        "p7": ("insufficient_gpus", 0, 3)}


def test_the_higher_priority_work_ahead_is_counted_in_queue_order():
    from gpupoc.classes.queue_congestion.reconstruct import _higher

    ahead = [wl(p, priority=v) for p, v in (("x", 3000), ("y", 2000), ("z", 2000), ("w", 1000), ("v", 500))]
    assert [_higher(ahead, v) for v in (5000, 3000, 2000, 1500, 1000, 100)] == [0, 0, 1, 3, 3, 5]


def test_an_attempt_preempted_behind_the_pipelines_gate_before_the_release_never_waited():
    # Kueue admits gated pods: "a" is preempted (Stopped) at -3 s, before the wave's release at 0, and its retry
    # "a2" is released with the wave; "c", resubmitted ungated after the release, still waits and must be explained
    tl = [wl("a", submitted=-10, released=None, scheduled=None, finished_at=at(-3)),
          wl("a2", submitted=-2, released=0, scheduled=1),
          wl("c", submitted=20, released=None, scheduled=None, finished_at=at(60))]
    rows = reconstruct(tl, [], ONE_NODE)
    assert not row(rows, "a").needs_explanation, "its whole life was behind the pipeline's gate"
    assert row(rows, "c").needs_explanation and not row(rows, "c").observed, "a wait after the release still counts"
    assert summarize(rows, 600).unobserved == 1
