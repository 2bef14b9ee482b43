"""KAI mode: the pod-grouper, gangs, queue limits and quotas, over-quota weights, reclaim, status and words."""

from __future__ import annotations

from gpupoc.sim.controllers.kai import implicit_podgroup

from .gang_helpers import NLP, SERVING, VISION, bound, events, evicted, mode_state, podgroup, remove, run, submit


def scheduling_condition(state, ns: str, name: str) -> dict | None:
    conds = (state.store.get("podgroups", ns, name).get("status") or {}).get("schedulingConditions") or []
    return conds[-1] if conds else None


def test_the_pod_grouper_makes_a_podgroup_per_bare_pod(tmp_path):
    state = mode_state(tmp_path, "kai")
    pod = submit(state, "solo", NLP, 2, preemptible=True)
    run(state)
    name = f"pg-solo-{pod['metadata']['uid']}"
    pg = state.store.get("podgroups", NLP, name)
    assert pg["apiVersion"] == "scheduling.run.ai/v2alpha2"
    assert pg["spec"] == {"minMember": 1, "queue": NLP, "priorityClassName": "gpupoc-normal",
                          "preemptibility": "preemptible"}
    assert pg["metadata"]["labels"] == {"kai.scheduler/queue": NLP}
    stored = state.store.get("pods", NLP, "solo")
    assert stored["metadata"]["annotations"]["pod-group-name"] == name and stored["spec"]["nodeName"]
    message = events(state, "Pod", "solo", "Scheduled")[0]["message"]
    assert message.startswith("Successfully assigned pod team-nlp/solo to node ") and message.endswith(
        " at node-pool default")


def test_implicit_podgroup_reads_the_legacy_queue_label():
    pod = {"metadata": {"name": "p", "namespace": "n", "uid": "u", "labels": {"runai/queue": "q"}}, "spec": {}}
    assert implicit_podgroup(pod)["spec"]["queue"] == "q"


def test_a_gang_binds_whole_or_not_at_all_with_kais_reasons(tmp_path):
    state = mode_state(tmp_path, "kai")
    podgroup(state, "g", VISION, 4, preemptibility="preemptible")
    for i in range(4):  # 6 GPUs each: one per training node, 3 of 4 fit
        submit(state, f"g{i}", VISION, 6, group="g")
    run(state)
    assert bound(state, VISION) == []
    cond = scheduling_condition(state, VISION, "g")
    assert (cond["type"], cond["nodePool"], cond["reason"], cond["status"]) == (
        "UnschedulableOnNodePool", "default", "Unschedulable", "True")
    cause = ("no nodes with enough resources were found: 2 node(s) didn't match Pod's node affinity/selector. \n"
             "3 node(s) didn't have enough resources: GPUs.")
    text = (f"Resources were found for 3 pods while 4 are required for gang scheduling. Additional pods cannot be "
            f"scheduled due to: {cause}")
    assert cond["reasons"] == [{"reason": "PodSchedulingErrors", "message": text}]
    assert cond["message"] == f"PodSchedulingErrors: {text}."
    pod3 = state.store.get("pods", VISION, "g3")
    ps = next(c for c in pod3["status"]["conditions"] if c["type"] == "PodScheduled")
    assert (ps["reason"], ps["message"]) == ("Unschedulable", cause)
    group_event = events(state, "PodGroup", "g", "Unschedulable")[0]
    assert group_event["type"] == "Normal" and group_event["message"] == cond["message"]
    assert events(state, "Pod", "g0", "Unschedulable")[0]["type"] == "Warning"
    remove_one = state.store.get("podgroups", VISION, "g")
    assert remove_one["status"]["pending"] == 4


def test_a_podgroup_short_of_pods_is_not_ready(tmp_path):
    state = mode_state(tmp_path, "kai")
    podgroup(state, "g", VISION, 3, preemptibility="preemptible")
    submit(state, "g0", VISION, 1, group="g")
    run(state)
    assert bound(state, VISION) == []
    assert [e["message"] for e in events(state, "PodGroup", "g", "NotReady")] == [
        "Job is not ready for scheduling. Waiting for 3 pods, currently 1 exist, 0 are gated"]


def test_a_queue_limit_refuses_with_over_limit_and_queue_details(tmp_path):
    state = mode_state(tmp_path, "kai")
    submit(state, "big", SERVING, 4, pool="inference", preemptible=True)
    submit(state, "more", SERVING, 4, pool="inference", preemptible=True)
    submit(state, "over", SERVING, 1, pool="inference", preemptible=True)  # serving's limit is 8
    run(state)
    assert bound(state, SERVING) == ["big", "more"]
    group = next(pg for pg in state.store.list("podgroups", SERVING) if pg["metadata"]["name"].startswith("pg-over-"))
    reason = group["status"]["schedulingConditions"][0]["reasons"][0]
    assert reason["reason"] == "OverLimit"
    assert reason["message"] == ("team-serving quota has reached the allowable limit of GPUs. Limit is 8 GPUs, "
                                 "currently 8 GPUs allocated and workload requested 1 GPUs")
    details = reason["details"]["queueDetails"]
    assert details["name"] == SERVING and details["queueResourceLimits"] == {"nvidia.com/gpu": "8"}
    assert details["queueAllocatedResources"] == {"nvidia.com/gpu": "8"}


def test_a_non_preemptible_workload_stays_within_its_quota(tmp_path):
    state = mode_state(tmp_path, "kai")
    for i in range(3):
        submit(state, f"n{i}", NLP, 4)  # gpupoc-normal (1000) is non-preemptible: quota 8
    run(state)
    assert bound(state, NLP) == ["n0", "n1"]
    group = next(pg for pg in state.store.list("podgroups", NLP) if pg["metadata"]["name"].startswith("pg-n2-"))
    reason = group["status"]["schedulingConditions"][0]["reasons"][0]
    assert reason["reason"] == "NonPreemptibleOverQuota"
    assert reason["message"] == ("Non-preemptible workload is over quota. Workload requested 4 GPUs, but team-nlp "
                                 "quota is 8 GPUs, while 8 GPUs are already allocated for non-preemptible pods. Use a "
                                 "preemptible workload to go over quota.")
    queue = state.store.get("queues", None, NLP)
    assert queue["status"]["allocatedNonPreemptible"] == {"nvidia.com/gpu": "8"}


def test_over_quota_gpus_are_divided_by_over_quota_weight(tmp_path):
    state = mode_state(tmp_path, "kai")
    for ns in (VISION, NLP):
        for i in range(24):
            submit(state, f"{ns[5]}{i:02d}", ns, 1, preemptible=True)
    run(state)
    # quotas 8 + 8; fair shares 18.7 and 13.3 (weights 2:1 over the rest): the 24 H100s go 14 / 10
    assert (len(bound(state, VISION)), len(bound(state, NLP))) == (14, 10)
    run(state)
    assert evicted(state) == [], "at their fair shares no queue reclaims from the other"
    parent = state.store.get("queues", None, "gpupoc")
    assert parent["status"]["childQueues"] == [NLP, SERVING, VISION]
    assert parent["status"]["allocated"] == {"nvidia.com/gpu": "24"}


def test_a_queue_under_its_quota_reclaims_preemptible_gpus(tmp_path):
    state = mode_state(tmp_path, "kai")
    for i in range(3):
        submit(state, f"v{i}", VISION, 8, preemptible=True)  # all 24 H100s, 16 over quota
    run(state)
    submit(state, "n0", NLP, 8, preemptible=True)
    run(state)
    victims = evicted(state, VISION)
    assert victims == ["v2"]
    group = next(pg for pg in state.store.list("podgroups", VISION) if pg["metadata"]["name"].startswith("pg-v2-"))
    nlp_group = next(pg for pg in state.store.list("podgroups", NLP))
    evict = events(state, "PodGroup", group["metadata"]["name"], "Evict")
    assert [e["message"] for e in evict] == [
        f"Pod team-vision/v2 was preempted by workload team-nlp/{nlp_group['metadata']['name']}."]
    remove(state, "v2")
    run(state)
    assert bound(state, NLP) == ["n0"]


def test_non_preemptible_workloads_are_never_reclaimed(tmp_path):
    state = mode_state(tmp_path, "kai")
    submit(state, "v0", VISION, 8, preemptible=True)
    submit(state, "v1", VISION, 8, preemptible=False)  # within team-vision's quota of 8
    submit(state, "v2", VISION, 8, preemptible=True)
    run(state)
    assert bound(state, VISION) == ["v0", "v1", "v2"]
    submit(state, "n0", NLP, 8, preemptible=True)
    run(state)
    assert evicted(state, VISION) == ["v2"], "a preemptible job, never the non-preemptible v1"
