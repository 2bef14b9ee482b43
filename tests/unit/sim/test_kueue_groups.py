"""Kueue pod groups: one Workload per group once all its pods exist, admitted whole, in Kueue's words."""

from __future__ import annotations

from gpupoc.sim.controllers.kueue_groups import role_hash

from .gang_helpers import NLP, VISION, condition, events, mode_state, remove, run, submit, ungated


def test_the_group_workload_waits_for_all_its_pods(tmp_path):
    state = mode_state(tmp_path, "kueue")
    submit(state, "g0", VISION, 4, group="train", total=3)
    run(state)
    assert state.store.list("workloads", VISION) == []
    warn = events(state, "Pod", "g0", "ErrWorkloadCompose")
    assert [(e["type"], e["message"], e["source"]["component"]) for e in warn] == [
        ("Warning", "'train' group has fewer runnable pods than expected", "pod-kueue-controller")]
    for i in (1, 2):
        submit(state, f"g{i}", VISION, 4, group="train", total=3)
    run(state)
    wl = state.store.get("workloads", VISION, "train")
    assert [o["name"] for o in wl["metadata"]["ownerReferences"]] == ["g0", "g1", "g2"]
    [podset] = wl["spec"]["podSets"]
    assert podset["count"] == 3 and len(podset["name"]) == 8, "the pods' role hash"
    assert [e["message"] for e in events(state, "Pod", "g2", "CreatedWorkload")] == ["Created Workload: team-vision/train"]
    assert ungated(state, VISION) == ["g0", "g1", "g2"], "admitted together"
    assert wl["status"]["admission"]["podSetAssignments"][0]["count"] == 3


def test_a_group_larger_than_the_free_quota_waits_whole(tmp_path):
    state = mode_state(tmp_path, "kueue")
    for i in range(4):
        submit(state, f"n{i}", NLP, 4)  # team-nlp holds 16 of the 24
    run(state)
    for i in range(3):
        submit(state, f"g{i}", VISION, 4, group="train", total=3)  # 12 > the 8 left
    run(state)
    assert ungated(state, VISION) == []
    message = condition(state.store.get("workloads", VISION, "train"), "QuotaReserved")["message"]
    assert message.startswith("couldn't assign flavors to pod set ") and message.endswith(
        "insufficient unused quota for nvidia.com/gpu in flavor training, 4 more needed. Pending the preemption of "
        "1 workload(s)")


def test_a_role_hash_annotation_names_the_pod_set():
    pod = {"metadata": {"annotations": {"kueue.x-k8s.io/role-hash": "workers"}}, "spec": {}}
    assert role_hash(pod) == "workers"
    a = {"metadata": {}, "spec": {"containers": [{"name": "m", "image": "x", "env": [{"name": "R", "value": "1"}]}]}}
    b = {"metadata": {}, "spec": {"containers": [{"name": "m", "image": "x", "env": [{"name": "R", "value": "2"}]}]}}
    assert role_hash(a) == role_hash(b) and len(role_hash(a)) == 8


def test_the_group_finishes_when_every_pod_has_ended_and_goes_with_them(tmp_path):
    state = mode_state(tmp_path, "kueue")
    for i in range(2):
        submit(state, f"g{i}", VISION, 4, group="pair", total=2)
    run(state)
    for i in range(2):
        pod = state.store.get("pods", VISION, f"g{i}")
        pod["status"]["phase"] = "Succeeded"
        state.store.update("pods", pod)
    run(state)
    assert condition(state.store.get("workloads", VISION, "pair"), "Finished")["reason"] == "Succeeded"
    remove(state, "g0")
    remove(state, "g1")
    run(state)
    assert state.store.get("workloads", VISION, "pair") is None


def test_under_gang_partial_each_pod_of_a_group_is_its_own_workload(tmp_path):
    state = mode_state(tmp_path, "kueue", ("gang-partial",))
    for i in range(2):
        submit(state, f"g{i}", VISION, 4, group="pair", total=2)
    run(state)
    assert state.store.get("workloads", VISION, "pair") is None
    assert len(state.store.list("workloads", VISION)) == 2
