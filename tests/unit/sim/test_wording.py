"""The scheduler's wording: kube-scheduler's by default, Volcano's or KAI's under their profiles; the same
scheduling decisions in every dialect."""

from __future__ import annotations

from collections import Counter

from gpupoc.sim.behaviours import Behaviour
from gpupoc.sim.controllers import wording as W

from .behaviour_helpers import bound, condition, events, make_state, pod, submit

GPU_SHORT = Counter({"Insufficient nvidia.com/gpu": 3, "node(s) didn't match Pod's node affinity/selector": 2})


def test_each_dialect_words_a_pod_that_fits_nowhere_its_own_way():
    assert W.KUBE_WORDING.unschedulable(5, GPU_SHORT, "preemption: x") == (
        "0/5 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, "
        "3 Insufficient nvidia.com/gpu. preemption: x.")
    assert W.VOLCANO_WORDING.unschedulable(5, GPU_SHORT, "preemption: x") == (
        "0/5 nodes are unavailable: 2 node(s) didn't match Pod's node affinity/selector, "
        "3 Insufficient nvidia.com/gpu.")
    assert W.KAI_WORDING.unschedulable(5, GPU_SHORT, None) == (
        "no nodes with enough resources were found: 2 node(s) didn't match Pod's node affinity/selector. \n"
        "3 node(s) didn't have enough resources: GPUs.")


def test_the_profile_chooses_the_wording_and_the_scheduler_names_it_serves():
    assert W.wording_for(frozenset()) is W.KUBE_WORDING
    assert W.wording_for(frozenset({Behaviour.VOLCANO_WORDING})).scheduler_names == {"default-scheduler", "volcano"}
    assert W.wording_for(frozenset({Behaviour.KAI_WORDING})).component == "kai-scheduler"


def _overfill(state) -> None:
    for name in ("a", "b", "c", "d"):
        submit(state, name, gpus=8, pc="gpupoc-low", gated=False)
    state.scheduler.run_pass()


def test_volcano_wording_reports_a_waiting_pod_in_volcanos_words_from_component_volcano(tmp_path):
    state = make_state(tmp_path, behaviours=["volcano-wording"])
    _overfill(state)
    assert len(bound(state, ["a", "b", "c", "d"])) == 3
    [waiting] = [n for n in "abcd" if not pod(state, n)["spec"].get("nodeName")]
    cond = condition(pod(state, waiting), "PodScheduled")
    assert (cond["reason"], cond["message"]) == ("Unschedulable", "0/5 nodes are unavailable: 2 node(s) didn't "
                                                 "match Pod's node affinity/selector, 3 Insufficient nvidia.com/gpu.")
    [ev] = events(state, waiting, "FailedScheduling")
    assert ev["source"]["component"] == "volcano" and ev["message"] == cond["message"]
    [scheduled] = events(state, "a", "Scheduled")
    assert scheduled["source"]["component"] == "volcano"


def test_kai_wording_reports_unschedulable_events_and_node_pools(tmp_path):
    state = make_state(tmp_path, behaviours=["kai-wording"])
    _overfill(state)
    [waiting] = [n for n in "abcd" if not pod(state, n)["spec"].get("nodeName")]
    [ev] = events(state, waiting, "Unschedulable")
    assert ev["type"] == "Warning" and ev["source"]["component"] == "kai-scheduler"
    assert ev["message"].startswith("no nodes with enough resources were found: ")
    assert "3 node(s) didn't have enough resources: GPUs." in ev["message"]
    assert not events(state, waiting, "FailedScheduling")
    [scheduled] = events(state, "a", "Scheduled")
    assert scheduled["message"] == (f"Successfully assigned pod team-vision/a to node "
                                    f"{pod(state, 'a')['spec']['nodeName']} at node-pool default")


def test_a_wording_profile_also_schedules_pods_that_name_its_scheduler(tmp_path):
    state = make_state(tmp_path, behaviours=["volcano-wording"])
    p = submit(state, "vc", gpus=1, gated=False)
    p["spec"]["schedulerName"] = "volcano"
    state.store.update("pods", p)
    state.scheduler.run_pass()
    assert bound(state, ["vc"]) == ["vc"]
    plain = make_state(tmp_path / "plain")
    q = submit(plain, "vc", gpus=1, gated=False)
    q["spec"]["schedulerName"] = "volcano"
    plain.store.update("pods", q)
    plain.scheduler.run_pass()
    assert bound(plain, ["vc"]) == [], "without the profile no scheduler serves schedulerName volcano"
