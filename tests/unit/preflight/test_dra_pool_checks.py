"""Under ``platform.options.gpus: dra`` the pools' GPUs are counted from the ResourceSlices' whole-card devices."""

from types import SimpleNamespace

from gpupoc.controlplane.dra import dra_nodes
from gpupoc.controlplane.dra_slices import node_slices
from gpupoc.controlplane.nodes import node_objects
from gpupoc.kube.dra import cards_per_node
from gpupoc.plan import load_plan
from gpupoc.plan.loader import DEFAULT_PLAN
from gpupoc.preflight.pool_checks import pool_problems, pools

DRA_PLAN = f"{DEFAULT_PLAN}#kube-dra"


def _cluster(plan, gpus_on_first: int | None = None):
    """The plan's KWOK nodes without nvidia.com/gpu, and the slices they publish (the first node's card count
    changed when given)."""
    nodes = dra_nodes(node_objects(plan.pools))
    slices = []
    for pool in plan.pools:
        for i, name in enumerate(pool.node_names):
            count = gpus_on_first if (gpus_on_first is not None and pool is plan.pools[0] and i == 0) \
                else pool.gpus_per_node
            slices += node_slices(name, count, pool.gpu_model)
    return nodes, slices


def _ctx(plan, nodes, slices):
    return SimpleNamespace(plan=plan, test_class=None, nodes=lambda: nodes, resource_slices=lambda: slices)


def test_dra_nodes_pass_on_their_whole_card_devices_and_fail_on_allocatable():
    plan = load_plan(DRA_PLAN, kubeconfig_later=True)
    nodes, slices = _cluster(plan)
    pool = plan.pool("training")
    mine = [n for n in nodes if n["metadata"]["name"] in pool.node_names]
    assert pool_problems(pool, mine, cards_per_node(slices)) == []
    assert any("has 0 allocatable nvidia.com/gpu" in p for p in pool_problems(pool, mine)), \
        "without the slices a DRA node has no nvidia.com/gpu: the device-plugin count must not pass it"
    results = pools(_ctx(plan, nodes, slices))
    assert [r.status for r in results] == ["ok", "ok"], results
    assert "whole-card DRA devices" in results[0].detail


def test_a_node_publishing_fewer_cards_fails_naming_the_dra_devices_and_the_fix():
    plan = load_plan(DRA_PLAN, kubeconfig_later=True)
    nodes, slices = _cluster(plan, gpus_on_first=6)
    failed = [r for r in pools(_ctx(plan, nodes, slices)) if r.status != "ok"]
    assert len(failed) == 1 and "training-node-1 has 6 GPUs (6 whole-card DRA devices" in failed[0].detail
    assert "--dra" in failed[0].fix and "--cluster kwok" in failed[0].fix


def test_unlistable_resource_slices_fail_the_check_naming_the_right_to_grant():
    plan = load_plan(DRA_PLAN, kubeconfig_later=True)
    nodes, _ = _cluster(plan)
    [result] = pools(_ctx(plan, nodes, None))
    assert result.status == "failed" and "ResourceSlices cannot be listed" in result.detail
    assert "resourceslices" in result.fix


def test_the_device_plugin_plan_still_counts_allocatable_gpus():
    plan = load_plan(DEFAULT_PLAN, kubeconfig_later=True)
    nodes = node_objects(plan.pools)
    assert [r.status for r in pools(_ctx(plan, nodes, None))] == ["ok", "ok"]
