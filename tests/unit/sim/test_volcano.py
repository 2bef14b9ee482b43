"""Volcano mode: the PodGroup controller, enqueue, gang allocation, deserved shares, reclaim, status, words."""

from __future__ import annotations

import re

from gpupoc.sim.controllers.volcano import implicit_podgroup

from .gang_helpers import NLP, VISION, bound, condition, events, evicted, mode_state, podgroup, remove, run, submit

GANG = re.compile(r"^\d+/\d+ tasks in gang unschedulable: pod group is not ready, ")


def test_a_pod_without_podgroup_gets_one_like_volcanos_controller(tmp_path):
    state = mode_state(tmp_path, "volcano")
    pod = submit(state, "solo", NLP, 2, pc="gpupoc-high")
    run(state)
    name = f"podgroup-{pod['metadata']['uid']}"
    pg = state.store.get("podgroups", NLP, name)
    assert pg["apiVersion"] == "scheduling.volcano.sh/v1beta1" and pg["kind"] == "PodGroup"
    assert pg["spec"]["minMember"] == 1 and pg["spec"]["queue"] == NLP
    assert pg["spec"]["priorityClassName"] == "gpupoc-high"
    assert pg["spec"]["minResources"]["nvidia.com/gpu"] == "2"
    assert pg["metadata"]["ownerReferences"][0]["uid"] == pod["metadata"]["uid"]
    stored = state.store.get("pods", NLP, "solo")
    assert stored["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == name
    assert stored["spec"]["nodeName"] and pg["status"]["phase"] == "Running"


def test_implicit_podgroup_is_named_after_the_controlling_owner():
    pod = {"metadata": {"name": "p", "namespace": "n", "uid": "pod-uid",
                        "ownerReferences": [{"kind": "Job", "name": "j", "uid": "job-uid", "controller": True}]},
           "spec": {"containers": []}}
    assert implicit_podgroup(pod)["metadata"]["name"] == "podgroup-job-uid"


def test_a_gang_is_bound_whole_when_its_pods_fit(tmp_path):
    state = mode_state(tmp_path, "volcano")
    podgroup(state, "g", VISION, 2, minResources={"nvidia.com/gpu": "16"})
    for i in range(2):
        submit(state, f"g{i}", VISION, 8, group="g")
    run(state)
    assert bound(state, VISION) == ["g0", "g1"]
    pg = state.store.get("podgroups", VISION, "g")
    assert pg["status"]["phase"] == "Running" and pg["status"]["running"] == 2
    scheduled = condition(pg, "Scheduled")
    assert scheduled["reason"] == "tasks in gang are ready to be scheduled" and scheduled["status"] == "True"
    assert [e["message"] for e in events(state, "PodGroup", "g", "Scheduled")] == ["pod group is ready"]
    assert events(state, "Pod", "g0", "Scheduled")[0]["source"]["component"] == "volcano"


def test_a_gang_that_fits_only_partly_binds_no_pod_and_says_why(tmp_path):
    state = mode_state(tmp_path, "volcano")
    podgroup(state, "g", VISION, 4)
    for i in range(4):  # 5 GPUs each, one per training node: 3 fit, the 4th does not
        submit(state, f"g{i}", VISION, 5, group="g")
    run(state)
    assert bound(state, VISION) == []
    pg = state.store.get("podgroups", VISION, "g")
    cond = condition(pg, "Unschedulable")
    assert cond["reason"] == "NotEnoughResources" and cond["status"] == "True" and cond["transitionID"]
    assert cond["message"] == ("1/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable; "
                               "Pending: 1 Unschedulable, 3 Schedulable")
    assert pg["status"]["phase"] == "Inqueue"
    reasons = {p["metadata"]["name"]: condition(p, "PodScheduled") for p in state.store.list("pods", VISION)}
    assert reasons["g3"]["reason"] == "Unschedulable"
    assert reasons["g3"]["message"] == ("0/5 nodes are unavailable: 2 node(s) didn't match Pod's node "
                                        "affinity/selector, 3 Insufficient nvidia.com/gpu.")
    assert reasons["g0"]["reason"] == "Schedulable"
    assert re.match(r"^Pod team-vision/g0 can possibly be assigned to training-node-\d$", reasons["g0"]["message"])
    warning = events(state, "PodGroup", "g", "Unschedulable")[0]
    assert warning["type"] == "Warning" and GANG.match(warning["message"])
    assert events(state, "Pod", "g3", "FailedScheduling")[0]["message"] == reasons["g3"]["message"]


def test_two_half_fitting_gangs_do_not_deadlock(tmp_path):
    state = mode_state(tmp_path, "volcano")
    for name in ("a", "b"):
        podgroup(state, name, VISION, 2)
        for i in range(2):  # each gang needs 2 of the 3 training nodes
            submit(state, f"{name}{i}", VISION, 8, group=name)
    run(state)
    assert bound(state, VISION) == ["a0", "a1"], "one gang whole, the other none"
    assert state.store.get("podgroups", VISION, "b")["status"]["phase"] == "Inqueue"
    remove(state, "a0")
    remove(state, "a1")
    run(state)
    assert bound(state, VISION) == ["b0", "b1"]


def test_a_podgroup_with_too_few_pods_is_not_enough_tasks(tmp_path):
    state = mode_state(tmp_path, "volcano")
    podgroup(state, "g", VISION, 3)
    for i in range(2):
        submit(state, f"g{i}", VISION, 1, group="g")
    run(state)
    cond = condition(state.store.get("podgroups", VISION, "g"), "Unschedulable")
    assert cond["reason"] == "NotEnoughTasks"
    assert cond["message"] == "Not enough valid tasks for gang-scheduling, valid: 2, min: 3"
    assert bound(state, VISION) == []


def test_a_podgroup_beyond_its_queue_capability_stays_pending_with_volcanos_event(tmp_path):
    state = mode_state(tmp_path, "volcano")
    podgroup(state, "g", VISION, 3, minResources={"nvidia.com/gpu": "24"})  # vision: capability 24 - 12 guaranteed
    for i in range(3):
        submit(state, f"g{i}", VISION, 8, group="g")
    run(state)
    pg = state.store.get("podgroups", VISION, "g")
    assert pg["status"]["phase"] == "Pending" and bound(state, VISION) == []
    msgs = [(e["type"], e["message"]) for e in events(state, "PodGroup", "g", "Unschedulable")]
    assert ("Normal", "queue resource quota insufficient: insufficient nvidia.com/gpu") in msgs


def test_the_overcommitted_cluster_refuses_to_enqueue_more(tmp_path):
    state = mode_state(tmp_path, "volcano")
    podgroup(state, "g", VISION, 1, minResources={"nvidia.com/gpu": "40"})  # 32 GPUs x 1.2 = 38.4
    submit(state, "g0", VISION, 8, group="g")
    run(state)
    msgs = [e["message"] for e in events(state, "PodGroup", "g", "Unschedulable")]
    assert "resource in cluster is overused: overused nvidia.com/gpu" in msgs


def test_weights_divide_the_pool_beyond_guarantees(tmp_path):
    state = mode_state(tmp_path, "volcano")
    for ns in (VISION, NLP):
        for i in range(24):
            submit(state, f"{ns[5]}{i:02d}", ns, 1)
    run(state)
    # guarantees 4 + 4 + 8 (serving); the other 16 split 2:1 -> 14.67 and 9.33 deserved
    assert (len(bound(state, VISION)), len(bound(state, NLP))) == (14, 9)
    queue = state.store.get("queues", None, VISION)
    assert queue["status"]["allocated"] == {"nvidia.com/gpu": "14"} and queue["status"]["state"] == "Open"


def test_a_queue_below_its_deserved_share_reclaims_from_one_above(tmp_path):
    state = mode_state(tmp_path, "volcano")
    for i in range(5):
        submit(state, f"v{i}", VISION, 4)  # team-nlp idle: team-vision deserves 20
    run(state)
    assert len(bound(state, VISION)) == 5
    submit(state, "n0", NLP, 8)
    run(state)
    victims = evicted(state, VISION)
    assert victims == ["v4"], "the newest job of the queue above its share, just enough to fit"
    pod = state.store.get("pods", VISION, "v4")
    assert condition(pod, "Ready")["reason"] == "Evict"
    assert [e["message"] for e in events(state, "Pod", "v4", "Evict")] == ["Pod is evicted, because of reclaim"]
    remove(state, "v4")
    run(state)
    assert bound(state, NLP) == ["n0"]
    assert len(bound(state, VISION)) == 4, "the freed GPUs went to the reclaimer, not back to the borrower"


def test_an_unreclaimable_queue_is_left_alone(tmp_path):
    def serving_only(raw):
        raw["volcano"]["queues"][0]["reclaimable"] = False
    state = mode_state(tmp_path, "volcano", edit=serving_only)
    for i in range(5):
        submit(state, f"v{i}", VISION, 4)
    run(state)
    submit(state, "n0", NLP, 8)
    run(state)
    assert evicted(state) == []
