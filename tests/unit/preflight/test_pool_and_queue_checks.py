"""Pools against nodes, and a cluster's queues against the plan's queue setup."""

from gpupoc.plan import load_plan
from gpupoc.plan.loader import DEFAULT_PLAN
from gpupoc.plan.model import Toleration
from gpupoc.preflight.pool_checks import pool_nodes, pool_problems, tolerated
from gpupoc.preflight.queue_match import kai_differences, kueue_differences, volcano_differences
from gpupoc.kube.queue_objects import cluster_queue, kai_queue, volcano_queue

PLANS = DEFAULT_PLAN.parent


def node(name, gpus=8, labels=None, taints=None):
    return {"metadata": {"name": name, "labels": {"gpupoc.io/pool": "training",
                                                  "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", **(labels or {})}},
            "spec": {"taints": taints or []}, "status": {"allocatable": {"nvidia.com/gpu": str(gpus)}}}


def test_tolerations_follow_the_kubernetes_rules():
    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    assert tolerated(taint, [Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")])
    assert tolerated(taint, [Toleration(key="nvidia.com/gpu", operator="Equal", value="present")])
    assert not tolerated(taint, [Toleration(key="nvidia.com/gpu", operator="Equal", value="absent")])
    assert not tolerated(taint, [Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoExecute")])
    assert tolerated(taint, [Toleration(operator="Exists")])


def test_a_matching_pool_has_no_problem_and_each_mismatch_is_named():
    pool = load_plan(DEFAULT_PLAN).pool("training")
    gpu_taint = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    good = [node(n, taints=gpu_taint) for n in pool.node_names]
    assert pool_problems(pool, good) == []
    bad = [node("training-node-1", gpus=4, taints=gpu_taint + [{"key": "maint", "effect": "NoExecute"}]),
           node("training-node-2", labels={"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"})]
    problems = " | ".join(pool_problems(pool, bad))
    assert "2 node(s) match node_selector" in problems and "['training-node-3'] are not among" in problems
    assert "training-node-1 has 4 allocatable" in problems and "taint maint=:NoExecute" in problems
    assert "NVIDIA-A100-SXM4-40GB" in problems
    assert [n["metadata"]["name"] for n in pool_nodes(good + [node("x", labels={"gpupoc.io/pool": "other"})],
                                                      pool)] == pool.node_names


def test_shared_nodes_count_their_cards_not_their_vgpus_or_replicas(tmp_path):
    from gpupoc.sim.bootstrap import bootstrap
    from gpupoc.sim.cluster import ClusterState
    from gpupoc.sim.config import CLUSTERS_DIR, load_cluster_config
    from gpupoc.sim.controllers.hami import hami_for

    state = ClusterState(load_cluster_config(CLUSTERS_DIR / "hami.yaml"), tmp_path)
    bootstrap(state)
    hami_for(state)
    pool = load_plan(PLANS / "hami.yaml").pool("training")
    nodes = pool_nodes(state.store.list("nodes"), pool)
    assert {n["status"]["allocatable"]["nvidia.com/gpu"] for n in nodes} == {"80"}  # cards x deviceSplitCount
    assert pool_problems(pool, nodes) == []
    fewer = pool.model_copy(update={"gpus_per_node": 4})
    assert "training-node-1 has 8 GPUs (80 allocatable nvidia.com/gpu: HAMi vGPUs of 8 registered cards), the " \
           "plan says 4" in pool_problems(fewer, nodes)
    sliced = node("training-node-1", gpus=32, labels={"nvidia.com/gpu.replicas": "4"})
    assert not [p for p in pool_problems(pool, [sliced]) if "training-node-1 has" in p]


def test_a_kueue_cluster_queue_as_rendered_matches_and_each_difference_is_named():
    plan = load_plan(PLANS / "kueue.yaml")
    cq = plan.cluster.queues.kueue.cluster_queues[0]
    flavor = {"spec": {"nodeLabels": {"gpupoc.io/pool": "training"}}}
    same = {"spec": cluster_queue(cq)["spec"]}
    assert kueue_differences(cq, same, flavor, plan.pool(cq.flavor)) == []
    other = {"spec": {**same["spec"], "cohort": "elsewhere", "preemption": {}}}
    other["spec"]["resourceGroups"] = [{"flavors": [{"name": cq.flavor, "resources": [
        {"name": "nvidia.com/gpu", "nominalQuota": "4", "borrowingLimit": "16"}]}]}]
    diffs = " | ".join(kueue_differences(cq, other, None, plan.pool(cq.flavor)))
    assert "cohort is elsewhere" in diffs and "nominalQuota of training is 4, the plan says 8" in diffs
    assert "preemption.withinClusterQueue is Never" in diffs and "ResourceFlavor 'training' does not exist" in diffs
    assert kueue_differences(cq, None, flavor, None) == ["it does not exist"]


def test_volcano_and_kai_queues_as_rendered_match():
    v = load_plan(PLANS / "volcano.yaml").cluster.queues.volcano.queues[0]
    assert volcano_differences(v, volcano_queue(v)) == []
    closed = {**volcano_queue(v), "status": {"state": "Closed"}}
    assert volcano_differences(None, closed) == ["its state is Closed (a closed queue takes no jobs)"]
    k = load_plan(PLANS / "kai.yaml").cluster.queues.kai.queues[1]
    assert kai_differences(k, kai_queue(k, [])) == []
    top = kai_queue(load_plan(PLANS / "kai.yaml").cluster.queues.kai.queues[0], [])
    assert kai_differences(None, top) == ["it has no parentQueue (KAI schedules pods of leaf queues only)"]
