"""The queueing fault profiles: each flips its own behaviour in every scheduler mode, and only that one."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.sim.faults import Fault, parse_faults

from .gang_helpers import VISION, condition, mode_state, run, submit
from .queue_scenarios import CHECKS, reasons_readable

MODES = ("kueue", "volcano", "kai")
QUEUE_FAULTS = tuple(CHECKS)
# Volcano's lent GPUs are the lender's weight-derived deserved share: ignoring weights (fairshare-ignored)
# also takes that share away, so nothing beyond its guarantee is reclaimed for the lender.
ALSO_FLIPPED = {("volcano", "fairshare-ignored", "borrow-not-reclaimed")}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("behaviour", QUEUE_FAULTS)
def test_the_correct_scheduler_shows_every_queueing_behaviour(tmp_path, mode, behaviour):
    assert CHECKS[behaviour](tmp_path, mode), f"{mode}: {CHECKS[behaviour].__name__} fails without faults"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fault", QUEUE_FAULTS)
@pytest.mark.parametrize("behaviour", QUEUE_FAULTS)
def test_each_queueing_fault_flips_its_own_behaviour_only(tmp_path, mode, fault, behaviour):
    seen = CHECKS[behaviour](tmp_path, mode, (fault,))
    flipped = fault == behaviour or (mode, fault, behaviour) in ALSO_FLIPPED
    assert seen is not flipped, (f"{mode} with {fault}: {CHECKS[behaviour].__name__} "
                                 f"{'still holds' if seen else 'fails'}")


def test_reasons_opaque_leaves_kube_scheduler_a_node_count_only(tmp_path):
    assert reasons_readable(tmp_path / "ok", "kube")
    assert not reasons_readable(tmp_path / "opaque", "kube", ("reasons-opaque",))
    state = mode_state(tmp_path / "opaque2", "kube", ("reasons-opaque",))
    pod = submit(state, "big", VISION, 16)
    pod["spec"].pop("schedulingGates", None)
    pod["metadata"]["labels"].pop("kueue.x-k8s.io/queue-name")
    state.store.update("pods", pod)
    run(state)
    assert condition(state.store.get("pods", VISION, "big"), "PodScheduled")["message"] == "0/5 nodes are available."


@pytest.mark.parametrize("mode", ["volcano", "kai"])
def test_reasons_opaque_empties_podgroup_texts_and_drops_their_events(tmp_path, mode):
    state = mode_state(tmp_path, mode, ("reasons-opaque",))
    submit(state, "big", VISION, 16, preemptible=True)
    run(state)
    group = next(iter(state.store.list("podgroups", VISION)))
    pod = state.store.get("pods", VISION, "big")
    assert condition(pod, "PodScheduled")["message"] == "0/5 nodes are available."
    if mode == "volcano":
        assert condition(group, "Unschedulable")["message"] == ""
    else:
        cond = group["status"]["schedulingConditions"][0]
        assert cond["message"] == "" and [r["message"] for r in cond["reasons"]] == [""]
    assert not [e for e in state.store.list("events", VISION) if e["involvedObject"]["kind"] == "PodGroup"]


def test_reasons_opaque_keeps_kueue_workloads_pending_without_a_message(tmp_path):
    state = mode_state(tmp_path, "kueue", ("reasons-opaque",))
    submit(state, "big", VISION, 32)
    run(state)
    wl = next(iter(state.store.list("workloads", VISION)))
    assert condition(wl, "QuotaReserved")["reason"] == "Pending"
    assert condition(wl, "QuotaReserved")["message"] == ""
    assert condition(state.store.get("pods", VISION, "big"), "PodScheduled")["reason"] == "SchedulingGated"


def test_queueing_faults_parse_and_unknown_names_are_refused_with_the_list():
    assert parse_faults("gang-partial, fairshare-ignored") == {Fault.GANG_PARTIAL, Fault.FAIRSHARE_IGNORED}
    with pytest.raises(ConfigError) as err:
        parse_faults("gang-partly")
    assert "gang-partly" in str(err.value) and "borrow-not-reclaimed" in str(err.value)


@pytest.mark.parametrize("faults, served", [((), True), (("reasons-opaque",), False), (("vague-reasons",), False)])
def test_hiding_reasons_also_hides_the_kueue_queue_positions(tmp_path, faults, served):
    from gpupoc.sim.api.status import StatusError
    from gpupoc.sim.api.visibility import _pending

    state = mode_state(tmp_path, "kueue", faults)
    submit(state, "big", VISION, 32)
    submit(state, "next", VISION, 32)
    run(state)
    if served:
        assert [i["positionInClusterQueue"] for i in _pending(state, cluster_queue="team-vision-training")] == [0, 1]
    else:
        with pytest.raises(StatusError) as err:
            _pending(state, cluster_queue="team-vision-training")
        assert err.value.status["code"] == 404


def test_vague_reasons_says_one_vague_text_and_keeps_kueue_workloads_without_a_message(tmp_path):
    state = mode_state(tmp_path, "kueue", ("vague-reasons",))
    submit(state, "big", VISION, 32)
    run(state)
    wl = next(iter(state.store.list("workloads", VISION)))
    assert condition(wl, "QuotaReserved")["message"] == ""
