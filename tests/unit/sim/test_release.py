"""release-staggered: lifted gates reach the scheduler one by one in a seeded order, and the preemption that
follows is kube-scheduler's (Preempted event, DisruptionTarget, nominatedNodeName, audited as the scheduler)."""

from __future__ import annotations

from .behaviour_helpers import (
    NS, FakeClock, audited, bound, condition, events, lift_gates, make_state, pod, submit,
)

from gpupoc.sim.controllers.release import MAX_DELAY, StaggeredRelease, release_delay

LOWS = ["low-a", "low-b", "low-c"]
HIGH = "high-d"


def arrival_order(seed: int) -> list[str]:
    return sorted(LOWS + [HIGH], key=lambda n: release_delay(seed, (NS, n)))


def seed_with_high_last() -> int:
    return next(s for s in range(500) if arrival_order(s)[-1] == HIGH
                and release_delay(s, (NS, HIGH)) - max(release_delay(s, (NS, n)) for n in LOWS) > 0.2)


def wave(state) -> None:
    for name in LOWS:
        submit(state, name, gpus=8, pc="gpupoc-low")
    submit(state, HIGH, gpus=8, pc="gpupoc-high")
    lift_gates(state, LOWS + [HIGH])


def test_delays_are_fixed_by_the_seed_and_differ_between_seeds():
    assert release_delay(3, (NS, "x")) == release_delay(3, (NS, "x"))
    assert all(0.0 <= release_delay(s, (NS, n)) <= MAX_DELAY for s in range(20) for n in LOWS)
    assert len({tuple(arrival_order(s)) for s in range(10)}) > 1, "every seed gave the same release order"


def test_a_pod_never_gated_is_not_held_and_a_lifted_one_is_held_until_its_time():
    clock = FakeClock()
    rel = StaggeredRelease(seed=0, clock=clock)
    assert rel.hold(("ns", "plain"), gated_now=False, schedulable=True) is False
    assert rel.hold(("ns", "w"), gated_now=True, schedulable=False) is False
    assert rel.hold(("ns", "w"), gated_now=False, schedulable=True) is True
    assert rel.due() == []
    clock.t += MAX_DELAY + 0.01
    assert rel.due() == [("ns", "w")]
    assert rel.hold(("ns", "w"), gated_now=False, schedulable=True) is False


def test_without_the_profile_the_wave_is_scheduled_at_once_by_priority_and_nothing_is_preempted(tmp_path):
    state = make_state(tmp_path)
    wave(state)
    state.scheduler.run_pass()
    assert HIGH in bound(state, LOWS + [HIGH])
    assert len(bound(state, LOWS)) == 2
    assert not any(condition(pod(state, n), "DisruptionTarget") for n in LOWS)


def test_staggered_release_binds_low_priority_pods_first_and_a_later_high_priority_pod_preempts_one(tmp_path):
    seed = seed_with_high_last()
    state = make_state(tmp_path, behaviours=["release-staggered"], seed=seed)
    clock = FakeClock()
    state.scheduler.release.clock = clock
    start = clock.t
    wave(state)
    state.scheduler.run_pass()
    assert bound(state, LOWS + [HIGH]) == [], "a lifted pod reached the scheduler before its delay"

    for name in LOWS:
        clock.t = start + release_delay(seed, (NS, name)) + 0.01
        state.scheduler.run_pass()
    assert bound(state, LOWS) == LOWS and not bound(state, [HIGH])

    clock.t = start + release_delay(seed, (NS, HIGH)) + 0.01
    state.scheduler.run_pass()
    victims = [n for n in LOWS if pod(state, n)["metadata"].get("deletionTimestamp")]
    assert len(victims) == 1, f"expected one preempted low-priority pod, got {victims}"
    victim, preemptor = pod(state, victims[0]), pod(state, HIGH)
    target = condition(victim, "DisruptionTarget")
    assert (target["status"], target["reason"]) == ("True", "PreemptionByScheduler")
    assert preemptor["status"]["nominatedNodeName"] == victim["spec"]["nodeName"]
    [ev] = events(state, victims[0], "Preempted")
    assert ev["message"] == (f"Preempted by pod {preemptor['metadata']['uid']} on node "
                             f"{victim['spec']['nodeName']}")
    assert ev["source"]["component"] == "default-scheduler"
    [delete] = audited(state, "delete", victims[0])
    assert delete["user"]["username"] == "system:kube-scheduler"
    assert delete["objectRef"]["namespace"] == NS and delete["responseStatus"]["code"] == 200
    assert delete["level"] == "RequestResponse" and delete["responseObject"]["metadata"]["name"] == victims[0]
    [patch] = audited(state, "patch", victims[0], "status")
    assert patch["user"]["username"] == "system:kube-scheduler" and patch["level"] == "Metadata"
