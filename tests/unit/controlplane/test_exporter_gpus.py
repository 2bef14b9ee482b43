"""controlplane/exporter_gpus: a KWOK node's cards, the pod holding each as the device plugin would give them, and
the figures a built pod's virtual workload claims, read from the API server's objects alone."""

from __future__ import annotations

from kubernetes.client import ApiClient

from gpupoc.controlplane.exporter_gpus import (MEMORY_LABEL, Allocator, EnergyMeter, cluster_cards, node_cards,
                                               pod_telemetry)
from gpupoc.controlplane.nodes import node_object
from gpupoc.kube.dcgm import Telemetry
from gpupoc.plan import DEFAULT_PLAN, load_plan
from gpupoc.podspec import build_pod
from gpupoc.sim.controllers.kubelet_runtime import VirtualSpec

PLAN = load_plan(DEFAULT_PLAN)
NODE = node_object(PLAN.pool("training"), "training-node-1")


def pod(name: str, gpus: int = 1, node: str = "training-node-1", phase: str = "Running",
        created: str = "2026-12-01T00:00:01Z", env: dict | None = None, running: bool = True) -> dict:
    meta = {"name": name, "namespace": "team-vision", "uid": f"uid-{name}", "creationTimestamp": created}
    state = {"running": {}} if running else {"waiting": {"reason": "ContainerCreating"}}
    return {"metadata": meta,
            "spec": {"nodeName": node, "containers": [{
                "name": "main", "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
                "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]},
            "status": {"phase": phase, "containerStatuses": [
                {"name": "main", "state": state}]}}


def holders(allocator: Allocator, pods: list[dict]) -> dict[int, str | None]:
    cards = {"training-node-1": node_cards(NODE)}
    allocator.assign(cards, pods)
    return {g.index: g.holder[1] if g.holder else None for g in cards["training-node-1"]}


def test_a_kwok_nodes_cards_follow_its_capacity_and_product_label():
    cards = node_cards(NODE)
    assert len(cards) == PLAN.pool("training").gpus_per_node
    assert {(c.model_name, c.memory_mib, c.max_power_w, c.idle_power_w) for c in cards} == {
        ("NVIDIA H100 80GB HBM3", 81559, 700, 72)}
    assert len({c.uuid for c in cards}) == len(cards) and cards == node_cards(NODE)  # stable between scrapes


def test_the_memory_label_overrides_the_model_and_an_unknown_model_has_no_size():
    node = {**NODE, "metadata": {**NODE["metadata"], "labels": {"nvidia.com/gpu.product": "Some-GPU",
                                                                MEMORY_LABEL: "24576"}}}
    assert node_cards(node)[0].memory_mib == 24576
    node["metadata"]["labels"].pop(MEMORY_LABEL)
    assert node_cards(node)[0].memory_mib == 0


def test_pods_get_the_lowest_free_cards_and_keep_them_when_an_earlier_one_ends():
    alloc = Allocator()
    first, second = pod("a", gpus=2, created="2026-12-01T00:00:01Z"), pod("b", gpus=1, created="2026-12-01T00:00:02Z")
    assert holders(alloc, [second, first]) == {0: "a", 1: "a", 2: "b", **{i: None for i in range(3, 8)}}
    first["status"]["phase"] = "Succeeded"
    third = pod("c", gpus=3, created="2026-12-01T00:00:03Z")
    got = holders(alloc, [first, second, third])
    assert got[2] == "b" and [i for i, h in got.items() if h == "c"] == [0, 1, 3]


def test_a_pod_without_gpus_or_unbound_holds_nothing():
    assert set(holders(Allocator(), [pod("cpu", gpus=0), pod("pending", node="")]).values()) == {None}


def test_a_running_pod_claims_its_env_and_one_not_started_claims_nothing():
    env = {"WORKLOAD_GPU_UTIL": "90", "WORKLOAD_GPU_MEM_MIB": "30000"}
    assert pod_telemetry(pod("a", env=env)) == Telemetry(90, 30000)
    assert pod_telemetry(pod("a", env=env, phase="Pending", running=False)) is None
    cards, tel = cluster_cards([NODE], [pod("a", env=env), pod("b", phase="Pending", running=False)], Allocator())
    assert tel == {("team-vision", "a"): Telemetry(90, 30000)}
    assert [c.holder for c in cards[:2]] == [("team-vision", "a"), ("team-vision", "b")]


def test_a_built_pod_claims_what_the_simulated_kubelet_plays_for_it():
    built = ApiClient().sanitize_for_serialization(build_pod(
        PLAN.workload("v-train-1g"), PLAN.tenant("team-vision"), PLAN, run_id="r", test_class="utilization",
        wave_gate=False, name="w"))
    built["spec"]["nodeName"] = "training-node-1"
    built["status"] = {"phase": "Running", "containerStatuses": [
        {"name": c["name"], "state": {"running": {}}} for c in built["spec"]["containers"]]}
    env = {e["name"]: e["value"] for e in built["spec"]["containers"][0]["env"]}
    sim = VirtualSpec.from_env(env)
    assert pod_telemetry(built) == Telemetry(sim.gpu_util, sim.gpu_mem_mib) == Telemetry(90, 30000)


def test_energy_integrates_power_between_scrapes_on_an_injected_clock():
    meter, cards = EnergyMeter(), node_cards(NODE)[:1]
    meter.advance(cards, {}, now=100.0)
    assert cards[0].energy_mj == 0
    again = node_cards(NODE)[:1]
    meter.advance(again, {}, now=102.0)
    assert again[0].energy_mj == 72 * 2 * 1000.0
    meter.advance(again, {}, now=101.0)  # a clock going back adds nothing
    assert again[0].energy_mj == 144000.0


def test_a_dra_nodes_cards_are_its_published_whole_cards_and_hold_its_gpu_pods():
    from gpupoc.controlplane.dra import dra_nodes
    from gpupoc.controlplane.dra_slices import node_slices

    [dra_node] = dra_nodes([NODE])
    assert node_cards(dra_node) == [], "a DRA node has no nvidia.com/gpu capacity of its own"
    slices = node_slices("training-node-1", 8, "NVIDIA H100 80GB HBM3")
    cards, _ = cluster_cards([dra_node], [pod("a", gpus=2)], Allocator(), slices)
    assert [(c.index, c.uuid) for c in cards] == [(c.index, c.uuid) for c in node_cards(NODE)]
    assert [c.index for c in cards if c.holder] == [0, 1]
