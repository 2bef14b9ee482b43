"""KWOK nodes from the plan's pools: names, GPU capacity, labels and taints."""

from __future__ import annotations

from gpupoc.controlplane.nodes import gpu_product, node_names, node_objects, taints
from gpupoc.plan import DEFAULT_PLAN, load_plan
from gpupoc.plan.model import Pool

PLAN = load_plan(DEFAULT_PLAN)


def pool(**kw) -> Pool:
    base = {"name": "train", "node_selector": {"example.com/pool": "train"}, "gpu_model": "NVIDIA H100 80GB HBM3",
            "gpus_per_node": 8, "nodes": 2}
    return Pool.model_validate({**base, **kw})


def test_nodes_are_named_as_the_simulated_cluster_names_them():
    assert node_names(pool()) == ["train-node-1", "train-node-2"]


def test_the_plans_own_node_names_come_first():
    assert node_names(pool(nodes=3, node_names=["gpu-a"])) == ["gpu-a", "train-node-1", "train-node-2"]


def test_every_pool_node_has_the_gpus_the_plan_says_and_the_pools_labels():
    nodes = node_objects(PLAN.pools)
    assert len(nodes) == sum(p.nodes for p in PLAN.pools)
    for p in PLAN.pools:
        mine = [n for n in nodes if all(n["metadata"]["labels"].get(k) == v for k, v in p.node_selector.items())]
        assert [n["metadata"]["name"] for n in mine] == node_names(p)
        for n in mine:
            assert n["status"]["capacity"]["nvidia.com/gpu"] == str(p.gpus_per_node)
            assert n["status"]["allocatable"]["nvidia.com/gpu"] == str(p.gpus_per_node)
            assert n["metadata"]["labels"]["nvidia.com/gpu.product"] == gpu_product(p.gpu_model)
            assert n["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"


def test_the_gpu_product_label_is_the_model_with_dashes():
    assert gpu_product("NVIDIA H100 80GB HBM3") == "NVIDIA-H100-80GB-HBM3"


def test_tolerations_become_taints_but_system_ones_do_not():
    p = pool(tolerations=[
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "example.com/team", "operator": "Equal", "value": "a", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "toleration_seconds": 8},
        {"key": "soft", "operator": "Exists", "effect": "PreferNoSchedule"},
    ])
    assert taints(p) == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
                         {"key": "example.com/team", "value": "a", "effect": "NoExecute"}]


def test_a_pool_without_tolerations_has_untainted_nodes():
    assert "taints" not in node_objects([pool()])[0]["spec"]
