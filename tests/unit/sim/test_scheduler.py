"""The simulated kube-scheduler: order, filters, bin-packing, FailedScheduling texts, preemption."""

from __future__ import annotations

from collections import Counter

import pytest
import yaml

from gpupoc.sim import clock
from gpupoc.sim.bootstrap import bootstrap
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import DEFAULT_CONFIG, ClusterConfig
from gpupoc.sim.controllers import scheduling as S
from gpupoc.sim.controllers.scheduler import schedule_pass, scheduler_for
from gpupoc.sim.faults import Fault

PRIO = {"gpupoc-critical": 100000, "gpupoc-high": 10000, "gpupoc-normal": 1000, "gpupoc-low": 100}
TOLERATE_GPU = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
FIVE_NODES_AFFINITY = ("0/5 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, "
                       "3 Insufficient nvidia.com/gpu.")


def make_state(tmp_path, faults=(), **changes) -> ClusterState:
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    for key, value in changes.items():
        raw[key] = value
    if "pools" in changes:
        raw["kueue"] = {}
    state = ClusterState(ClusterConfig.model_validate(raw), tmp_path, faults=frozenset(faults))
    bootstrap(state)
    return state


def one_pool(nodes: int = 1, gpus: int = 8) -> list[dict]:
    return [{"name": "training", "nodes": nodes, "gpus_per_node": gpus, "labels": {"gpupoc.io/pool": "training"},
             "gpu": {"model_name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559},
             "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}]


def make_pod(state, name, gpus=1, pc="gpupoc-normal", ns="team-vision", pool="training", tolerations=None,
             policy=None, created=None, gates=None, node=None, phase="Pending", **spec_extra) -> dict:
    spec = {
        "schedulerName": "default-scheduler",
        "priorityClassName": pc,
        "priority": PRIO[pc],
        "preemptionPolicy": policy or ("PreemptLowerPriority" if PRIO[pc] >= 10000 else "Never"),
        "terminationGracePeriodSeconds": 30,
        "tolerations": TOLERATE_GPU if tolerations is None else tolerations,
        "containers": [{"name": "main", "image": "gpupoc/virtual:1",
                        "resources": {"limits": {"nvidia.com/gpu": str(gpus)},
                                      "requests": {"nvidia.com/gpu": str(gpus)}}}],
        **spec_extra,
    }
    if pool:
        spec["nodeSelector"] = {"gpupoc.io/pool": pool}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    meta = {"name": name, "namespace": ns}
    if created:
        meta["creationTimestamp"] = created
    pod = {"metadata": meta, "spec": spec, "status": {"phase": phase}}
    if node:
        spec["nodeName"] = node
        state.inventory.allocate(node, (ns, name), "main", gpus)
        if phase == "Running":
            pod["status"]["startTime"] = clock.rfc3339()
    return state.store.create("pods", pod)


def pod(state, name, ns="team-vision"):
    return state.store.get("pods", ns, name)


def condition(p, type_):
    return next((c for c in p["status"].get("conditions", []) if c["type"] == type_), None)


def events(state, name, reason):
    return [e for e in state.store.list("events") if e["involvedObject"]["name"] == name and e["reason"] == reason]


# -- binding and order ----------------------------------------------------------------------------
def test_bind_sets_node_condition_gpus_and_scheduled_event(tmp_path):
    state = make_state(tmp_path)
    make_pod(state, "train-0", gpus=2)
    assert schedule_pass(state) == 1
    p = pod(state, "train-0")
    assert p["spec"]["nodeName"] == "training-node-1"
    cond = condition(p, "PodScheduled")
    assert cond["status"] == "True" and cond["lastTransitionTime"]
    assert [g.index for g in state.inventory.held_by(("team-vision", "train-0"))] == [0, 1]
    [ev] = events(state, "train-0", "Scheduled")
    assert ev["message"] == "Successfully assigned team-vision/train-0 to training-node-1"
    assert ev["source"]["component"] == "default-scheduler" and ev["type"] == "Normal"


def test_bin_packing_prefers_the_fullest_node_that_fits(tmp_path):
    state = make_state(tmp_path)
    make_pod(state, "a", gpus=6)
    schedule_pass(state)
    make_pod(state, "b", gpus=4)  # does not fit next to a: goes to the next empty node
    make_pod(state, "c", gpus=2)  # fills node-1 (2 free) rather than node-2 (4 free)
    schedule_pass(state)
    assert pod(state, "a")["spec"]["nodeName"] == "training-node-1"
    assert pod(state, "b")["spec"]["nodeName"] == "training-node-2"
    assert pod(state, "c")["spec"]["nodeName"] == "training-node-1"


def test_higher_priority_pod_is_scheduled_first(tmp_path):
    state = make_state(tmp_path, pools=one_pool())
    make_pod(state, "low", gpus=8, pc="gpupoc-low", created="2026-01-01T00:00:00Z")
    make_pod(state, "high", gpus=8, pc="gpupoc-high", created="2026-01-01T00:00:05Z")
    schedule_pass(state)
    assert pod(state, "high")["spec"].get("nodeName") == "training-node-1"
    assert "nodeName" not in pod(state, "low")["spec"]


def test_same_priority_is_first_come_first_served(tmp_path):
    state = make_state(tmp_path, pools=one_pool())
    make_pod(state, "second", gpus=8, created="2026-01-01T00:00:05Z")
    make_pod(state, "first", gpus=8, created="2026-01-01T00:00:00Z")
    schedule_pass(state)
    assert pod(state, "first")["spec"].get("nodeName") == "training-node-1"


def test_priority_ignored_fault_schedules_plain_fifo_without_preemption(tmp_path):
    state = make_state(tmp_path, faults=[Fault.PRIORITY_IGNORED], pools=one_pool())
    make_pod(state, "low", gpus=8, pc="gpupoc-low", created="2026-01-01T00:00:00Z")
    make_pod(state, "high", gpus=8, pc="gpupoc-high", created="2026-01-01T00:00:05Z")
    schedule_pass(state)
    schedule_pass(state)
    assert pod(state, "low")["spec"].get("nodeName") == "training-node-1"
    high = pod(state, "high")
    assert "nodeName" not in high["spec"] and "nominatedNodeName" not in high["status"]
    assert condition(pod(state, "low"), "DisruptionTarget") is None
    assert condition(high, "PodScheduled")["message"] == "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."


def test_small_pod_is_not_blocked_behind_an_unschedulable_big_one(tmp_path):
    state = make_state(tmp_path, pools=one_pool())
    make_pod(state, "running", gpus=4, node="training-node-1", phase="Running")
    make_pod(state, "big", gpus=8, pc="gpupoc-normal", created="2026-01-01T00:00:00Z")
    make_pod(state, "small", gpus=2, pc="gpupoc-low", created="2026-01-01T00:00:09Z")
    schedule_pass(state)
    assert pod(state, "small")["spec"].get("nodeName") == "training-node-1"
    assert "nodeName" not in pod(state, "big")["spec"]


def test_gated_pod_waits_until_its_gates_are_removed(tmp_path):
    state = make_state(tmp_path)
    make_pod(state, "gated", gates=["gpupoc.io/wave-release"])
    schedule_pass(state)
    p = pod(state, "gated")
    assert "nodeName" not in p["spec"]
    p["spec"].pop("schedulingGates")
    state.store.update("pods", p)
    schedule_pass(state)
    assert pod(state, "gated")["spec"]["nodeName"] == "training-node-1"


# -- filters and messages -------------------------------------------------------------------------
def test_a_pod_that_fits_a_node_whose_gpus_are_held_by_its_peers_finds_no_victims(tmp_path):
    state = make_state(tmp_path)
    for i in range(3):
        make_pod(state, f"peer-{i}", gpus=8, pc="gpupoc-high")
    schedule_pass(state)
    make_pod(state, "late", gpus=8, pc="gpupoc-high")
    schedule_pass(state)
    assert condition(pod(state, "late"), "PodScheduled")["message"] == (
        FIVE_NODES_AFFINITY + " preemption: 0/5 nodes are available: 2 Preemption is not helpful for scheduling, "
        "3 No preemption victims found for incoming pod.")


def test_failed_scheduling_message_matches_kube_scheduler(tmp_path):
    state = make_state(tmp_path)
    make_pod(state, "huge", gpus=9, pc="gpupoc-high")
    schedule_pass(state)
    # nine GPUs are more than any node has: NodeResourcesFit says no preemption can help on any of the five
    expected = FIVE_NODES_AFFINITY + " preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling."
    p = pod(state, "huge")
    cond = condition(p, "PodScheduled")
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", expected)
    [ev] = events(state, "huge", "FailedScheduling")
    assert (ev["type"], ev["message"], ev["source"]["component"]) == ("Warning", expected, "default-scheduler")


def test_preemption_policy_never_says_not_eligible(tmp_path):
    state = make_state(tmp_path)
    make_pod(state, "huge", gpus=9, pc="gpupoc-normal")
    schedule_pass(state)
    assert condition(pod(state, "huge"), "PodScheduled")["message"] == (
        FIVE_NODES_AFFINITY + " preemption: not eligible due to preemptionPolicy=Never.")


def test_untolerated_taint_is_reported_with_key_and_value(tmp_path):
    state = make_state(tmp_path)
    make_pod(state, "no-toleration", tolerations=[], pool=None)
    schedule_pass(state)
    assert condition(pod(state, "no-toleration"), "PodScheduled")["message"] == (
        "0/5 nodes are available: 5 node(s) had untolerated taint {nvidia.com/gpu: present}. "
        "preemption: not eligible due to preemptionPolicy=Never.")


def test_cordoned_and_unreachable_nodes_are_filtered(tmp_path):
    state = make_state(tmp_path)
    n1 = state.store.get("nodes", None, "training-node-1")
    n1["spec"]["unschedulable"] = True
    state.store.update("nodes", n1)
    n2 = state.store.get("nodes", None, "training-node-2")
    next(c for c in n2["status"]["conditions"] if c["type"] == "Ready")["status"] = "Unknown"
    n2["spec"]["taints"] = [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
                            {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}]
    state.store.update("nodes", n2)
    default_tolerations = TOLERATE_GPU + [
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}]
    make_pod(state, "p", gpus=8, tolerations=default_tolerations)
    make_pod(state, "q", gpus=8, tolerations=default_tolerations)
    schedule_pass(state)
    assert pod(state, "p")["spec"]["nodeName"] == "training-node-3"
    assert condition(pod(state, "q"), "PodScheduled")["message"] == (
        "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint "
        "{node.kubernetes.io/unreachable: }, 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node "
        "affinity/selector. preemption: not eligible due to preemptionPolicy=Never.")


def test_pod_count_capacity_is_a_filter(tmp_path):
    state = make_state(tmp_path, pools=one_pool())
    node = state.store.get("nodes", None, "training-node-1")
    node["status"]["allocatable"]["pods"] = "1"
    state.store.update("nodes", node)
    make_pod(state, "first", gpus=1)
    make_pod(state, "second", gpus=1)
    schedule_pass(state)
    assert condition(pod(state, "second"), "PodScheduled")["message"].startswith(
        "0/1 nodes are available: 1 Too many pods.")


def test_failed_scheduling_event_is_re_emitted_only_after_the_retry_interval(tmp_path):
    state = make_state(tmp_path, pools=one_pool())
    make_pod(state, "huge", gpus=9)
    schedule_pass(state)
    sched = scheduler_for(state)
    sched._capacity_freed = True
    schedule_pass(state)
    [ev] = events(state, "huge", "FailedScheduling")
    assert ev["count"] == 1
    sched.retry_seconds = 0.0
    schedule_pass(state)
    [ev] = events(state, "huge", "FailedScheduling")
    assert ev["count"] == 2


def test_idle_pass_changes_nothing(tmp_path):
    state = make_state(tmp_path, pools=one_pool())
    make_pod(state, "huge", gpus=9)
    schedule_pass(state)
    rv = state.store.rv
    assert schedule_pass(state) == 0
    assert state.store.rv == rv


# -- preemption -----------------------------------------------------------------------------------
def test_preemption_evicts_the_least_important_victims_and_nominates_the_node(tmp_path):
    state = make_state(tmp_path, pools=one_pool(nodes=2))
    make_pod(state, "normal-job", gpus=8, pc="gpupoc-normal", node="training-node-1", phase="Running")
    make_pod(state, "low-job", gpus=8, pc="gpupoc-low", node="training-node-2", phase="Running")
    make_pod(state, "urgent", gpus=8, pc="gpupoc-high")
    schedule_pass(state)
    urgent = pod(state, "urgent")
    assert urgent["status"]["nominatedNodeName"] == "training-node-2"
    assert condition(urgent, "PodScheduled")["message"] == (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: found a potential placement for pod on "
        "node training-node-2, preempting 1 victims")
    victim = pod(state, "low-job")
    cond = condition(victim, "DisruptionTarget")
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True", "PreemptionByScheduler", "default-scheduler: preempting to accommodate a higher priority pod")
    assert victim["metadata"]["deletionTimestamp"] and victim["metadata"]["deletionGracePeriodSeconds"] == 30
    [ev] = events(state, "low-job", "Preempted")
    assert ev["message"] == f"Preempted by pod {urgent['metadata']['uid']} on node training-node-2"
    assert condition(pod(state, "normal-job"), "DisruptionTarget") is None

    # while the victim terminates, no second round of preemption
    scheduler_for(state)._capacity_freed = True
    schedule_pass(state)
    assert condition(pod(state, "urgent"), "PodScheduled")["message"].endswith(
        "preemption: not eligible due to a terminating pod on the nominated node.")
    assert condition(pod(state, "normal-job"), "DisruptionTarget") is None

    # the kubelet finishes the victim: the preemptor lands on the nominated node
    state.inventory.release(("team-vision", "low-job"))
    state.store.delete("pods", "team-vision", "low-job")
    schedule_pass(state)
    assert pod(state, "urgent")["spec"]["nodeName"] == "training-node-2"


def test_freed_gpus_are_held_for_the_preemptor_not_given_to_lower_priority_pods(tmp_path):
    state = make_state(tmp_path, pools=one_pool())
    make_pod(state, "low-job", gpus=8, pc="gpupoc-low", node="training-node-1", phase="Running")
    make_pod(state, "urgent", gpus=8, pc="gpupoc-high")
    schedule_pass(state)
    make_pod(state, "sneaky", gpus=2, pc="gpupoc-normal")
    state.inventory.release(("team-vision", "low-job"))
    state.store.delete("pods", "team-vision", "low-job")
    schedule_pass(state)
    assert pod(state, "urgent")["spec"]["nodeName"] == "training-node-1"
    assert "nodeName" not in pod(state, "sneaky")["spec"]


def test_policy_never_does_not_preempt(tmp_path):
    state = make_state(tmp_path, pools=one_pool())
    make_pod(state, "low-job", gpus=8, pc="gpupoc-low", node="training-node-1", phase="Running")
    make_pod(state, "polite", gpus=8, pc="gpupoc-high", policy="Never")
    schedule_pass(state)
    assert condition(pod(state, "low-job"), "DisruptionTarget") is None
    assert "deletionTimestamp" not in pod(state, "low-job")["metadata"]
    assert condition(pod(state, "polite"), "PodScheduled")["message"] == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
        "preemption: not eligible due to preemptionPolicy=Never.")


def test_preemption_that_cannot_free_enough_reports_the_filter_reason(tmp_path):
    state = make_state(tmp_path, pools=one_pool())
    make_pod(state, "low-job", gpus=2, pc="gpupoc-low", node="training-node-1", phase="Running")
    make_pod(state, "peer", gpus=6, pc="gpupoc-high", node="training-node-1", phase="Running")
    make_pod(state, "urgent", gpus=8, pc="gpupoc-high")
    schedule_pass(state)
    assert "deletionTimestamp" not in pod(state, "low-job")["metadata"]
    assert condition(pod(state, "urgent"), "PodScheduled")["message"] == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: "
        "1 Insufficient nvidia.com/gpu.")


# -- pure helpers ---------------------------------------------------------------------------------
def test_select_victims_reprieves_the_most_important_pods_it_can():
    victims = [S.Victim(("ns", "p100"), 100, 4), S.Victim(("ns", "p200"), 200, 2), S.Victim(("ns", "p50"), 50, 2)]
    picked = S.select_victims(need=4, free=0, pod_room=10, candidates=victims)
    assert sorted(v.key[1] for v in picked) == ["p100"]
    assert S.select_victims(need=9, free=0, pod_room=10, candidates=victims) == S.REASON_INSUFFICIENT_GPU
    assert S.select_victims(need=1, free=0, pod_room=10, candidates=[]) == S.NO_VICTIMS


def test_best_choice_minimises_highest_victim_priority_then_count():
    a = S.NodeChoice("a", [S.Victim(("n", "x"), 500, 8)])
    b = S.NodeChoice("b", [S.Victim(("n", "y"), 100, 4), S.Victim(("n", "z"), 100, 4)])
    c = S.NodeChoice("c", [S.Victim(("n", "w"), 100, 8)])
    assert S.best_choice([a, b, c]).node == "c"


KV_NOSCHEDULE = {"key": "k", "value": "v", "effect": "NoSchedule"}


@pytest.mark.parametrize("toleration,taint,expected", [
    ({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, KV_NOSCHEDULE, True),
    ({"key": "k", "operator": "Equal", "value": "w"}, KV_NOSCHEDULE, False),
    ({"key": "k", "operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoExecute"}, True),
    ({"key": "k", "operator": "Exists", "effect": "NoExecute"}, KV_NOSCHEDULE, False),
    ({"operator": "Exists"}, {"key": "anything", "value": "v", "effect": "NoSchedule"}, True),
    ({"key": "", "operator": "Equal"}, {"key": "anything", "effect": "NoSchedule"}, False),
])
def test_toleration_matching(toleration, taint, expected):
    assert S.tolerates(toleration, taint) is expected


def test_prefer_no_schedule_taints_do_not_filter():
    assert S.untolerated_taint([{"key": "k", "effect": "PreferNoSchedule"}], []) is None


@pytest.mark.parametrize("expr,expected", [
    ({"key": "pool", "operator": "In", "values": ["training", "x"]}, True),
    ({"key": "pool", "operator": "NotIn", "values": ["training"]}, False),
    ({"key": "missing", "operator": "NotIn", "values": ["a"]}, True),
    ({"key": "pool", "operator": "Exists"}, True),
    ({"key": "pool", "operator": "DoesNotExist"}, False),
    ({"key": "gpus", "operator": "Gt", "values": ["4"]}, True),
])
def test_required_node_affinity_operators(expr, expected):
    spec = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [expr]}]}}}}
    assert S.matches_node_selector({"pool": "training", "gpus": "8"}, "n1", spec) is expected


def test_node_affinity_terms_are_ored_and_node_selector_anded():
    spec = {"nodeSelector": {"pool": "training"}, "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}}}}
    assert S.matches_node_selector({"pool": "training", "zone": "b"}, "n", spec)
    assert not S.matches_node_selector({"pool": "inference", "zone": "b"}, "n", spec)
    assert not S.matches_node_selector({"pool": "training", "zone": "c"}, "n", spec)


def test_fit_error_sorts_count_and_reason_text():
    msg = S.fit_error(12, Counter({"Insufficient nvidia.com/gpu": 10, "node(s) were unschedulable": 2}))
    assert msg == "0/12 nodes are available: 10 Insufficient nvidia.com/gpu, 2 node(s) were unschedulable."


def test_two_preemptors_free_two_different_nodes_and_each_lands_on_its_own(tmp_path):
    state = make_state(tmp_path, pools=one_pool(nodes=2))
    make_pod(state, "low-1", gpus=8, pc="gpupoc-low", node="training-node-1", phase="Running")
    make_pod(state, "low-2", gpus=8, pc="gpupoc-low", node="training-node-2", phase="Running")
    make_pod(state, "urgent-a", gpus=8, pc="gpupoc-high", created="2026-01-01T00:00:00Z")
    make_pod(state, "urgent-b", gpus=8, pc="gpupoc-high", created="2026-01-01T00:00:01Z")
    schedule_pass(state)
    assert pod(state, "urgent-a")["status"]["nominatedNodeName"] == "training-node-1"
    assert pod(state, "urgent-b")["status"]["nominatedNodeName"] == "training-node-2"
    for victim in ("low-1", "low-2"):
        state.inventory.release(("team-vision", victim))
        state.store.delete("pods", "team-vision", victim)
    schedule_pass(state)
    assert pod(state, "urgent-a")["spec"]["nodeName"] == "training-node-1"
    assert pod(state, "urgent-b")["spec"]["nodeName"] == "training-node-2"


def test_controller_loop_survives_a_failing_pass_and_stops_on_request(tmp_path, caplog):
    import asyncio

    from gpupoc.sim.controllers.loop import run_controllers
    from tests.waiting import until

    state = make_state(tmp_path)
    sched = scheduler_for(state)
    real_pass, calls = sched.run_pass, []

    def flaky_pass():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("boom")
        return real_pass()

    sched.run_pass = flaky_pass

    async def scenario():
        stop = asyncio.Event()
        tick = 0.05
        loop_task = asyncio.get_running_loop().create_task(run_controllers(state, stop, tick=tick))
        step = 1200 * tick  # a pass each tick: a loaded machine gets a thousand of them
        await until("the first (failing) scheduler pass", lambda: calls, step_seconds=step)
        make_pod(state, "later", gpus=1)  # the store change kicks the loop
        await until("a later pass to bind pod 'later'",
                    lambda: pod(state, "later")["spec"].get("nodeName") or loop_task.done(), step_seconds=step)
        stop.set()
        await asyncio.wait_for(loop_task, step)

    asyncio.run(scenario())
    assert pod(state, "later")["spec"]["nodeName"] == "training-node-1"
    assert "controller scheduler failed" in caplog.text
