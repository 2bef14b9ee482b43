"""The scheduler's wording: kube-scheduler's by default, Volcano's, KAI's or Chinese under their profiles; the
same scheduling decisions in every dialect; one vague text under ``vague-reasons``."""

from __future__ import annotations

from collections import Counter

import pytest

from gpupoc.sim.behaviours import Behaviour
from gpupoc.sim.faults import Fault
from gpupoc.sim.controllers import wording as W

from .behaviour_helpers import bound, condition, events, make_state, pod, submit

GPU_SHORT = Counter({"Insufficient nvidia.com/gpu": 3, "node(s) didn't match Pod's node affinity/selector": 2})


def test_each_dialect_words_a_pod_that_fits_nowhere_its_own_way():
    assert W.KUBE_WORDING.unschedulable(5, GPU_SHORT, "preemption: x") == (
        "0/5 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, "
        "3 Insufficient nvidia.com/gpu. preemption: x")
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


def test_zh_wording_reports_a_waiting_pod_in_chinese_naming_the_short_resource(tmp_path):
    state = make_state(tmp_path, behaviours=["zh-wording"])
    _overfill(state)
    assert len(bound(state, ["a", "b", "c", "d"])) == 3, "the same scheduling in every dialect"
    [waiting] = [n for n in "abcd" if not pod(state, n)["spec"].get("nodeName")]
    cond = condition(pod(state, waiting), "PodScheduled")
    assert cond["message"].startswith("0/5 个节点可用：2 个节点与 Pod 的节点亲和性/节点选择器不匹配，"
                                      "3 个节点的 nvidia.com/gpu 不足。"), cond["message"]
    [ev] = events(state, waiting, "FailedScheduling")
    assert ev["message"] == cond["message"] and ev["source"]["component"] == "default-scheduler"
    [scheduled] = events(state, "a", "Scheduled")
    assert scheduled["message"] == f"已成功将 team-vision/a 分配到节点 {pod(state, 'a')['spec']['nodeName']}"


def test_zh_wording_renders_the_preemption_note_and_every_filter_reason():
    english = ("0/3 nodes are available: 1 Too many pods, 1 node(s) were unschedulable, 1 node(s) had untolerated "
               "taint {gpu: yes}. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming "
               "pod.")
    assert W.ZH_WORDING.unschedulable(3, Counter(), None).startswith("0/3 个节点可用")
    from gpupoc.sim.controllers import zh_wording
    assert zh_wording.fit_error(english) == (
        "0/3 个节点可用：1 个节点的 Pod 数已达上限，1 个节点已封锁，不可调度，1 个节点有 Pod 不容忍的污点 {gpu: yes}。"
        "抢占：0/3 个节点可用：3 个节点上找不到可抢占的低优先级 Pod。")


@pytest.mark.parametrize("behaviours, vague", [((), "Pod is pending."), (("zh-wording",), "Pod 正在等待调度。")])
def test_vague_reasons_answers_every_unschedulable_pod_with_one_text(tmp_path, behaviours, vague):
    state = make_state(tmp_path, behaviours=behaviours, faults=[Fault.VAGUE_REASONS])
    _overfill(state)
    [waiting] = [n for n in "abcd" if not pod(state, n)["spec"].get("nodeName")]
    assert condition(pod(state, waiting), "PodScheduled")["message"] == vague
    assert {e["message"] for e in events(state, waiting, "FailedScheduling")} == {vague}
