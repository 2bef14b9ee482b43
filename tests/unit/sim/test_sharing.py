"""Time-slicing and MIG node configurations: what the nodes advertise and label, and what a tenant's
over-allocation does to its neighbour through the kubelet's process runtime (no isolation under
time-slicing, hardware isolation under MIG)."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from gpupoc.sim.admission import admit_pod, after_pod_created
from gpupoc.sim.bootstrap import bootstrap
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import CLUSTERS_DIR, load_cluster_config
from gpupoc.sim.controllers.gpu_driver import ledger_dir
from gpupoc.sim.controllers.kubelet import Kubelet
from gpupoc.sim.metrics import render_dcgm
from gpupoc.sim.sharing_config import Sharing
from gpupoc.workload.cuda import read_ledger

from .gang_helpers import NLP, SERVING, TOLERATE_GPU
from .kubelet_helpers import drive

pytestmark = pytest.mark.timeout(300)  # a hang guard: drive() fails first, naming what it awaited


def shipped(tmp_path, name: str) -> ClusterState:
    state = ClusterState(load_cluster_config(CLUSTERS_DIR / f"{name}.yaml"), tmp_path)
    bootstrap(state)
    return state


def test_time_slicing_advertises_replicas_of_one_card(tmp_path):
    state = shipped(tmp_path, "time-slicing")
    node = state.store.get("nodes", None, "inference-node-1")
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "16"
    labels = node["metadata"]["labels"]
    assert labels["nvidia.com/gpu.sharing-strategy"] == "time-slicing" and labels["nvidia.com/gpu.replicas"] == "4"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-L40S-SHARED"
    gpus = state.inventory.gpus["inference-node-1"]
    assert len({g.uuid for g in gpus}) == 4 and {g.memory_mib for g in gpus} == {46068}
    util = [line for line in render_dcgm(state).splitlines()
            if line.startswith("DCGM_FI_DEV_GPU_UTIL{") and 'Hostname="inference-node-1"' in line]
    assert len(util) == 4  # the exporter sees cards, not replicas


def test_mig_single_splits_each_card_into_instances_with_their_own_memory(tmp_path):
    state = shipped(tmp_path, "mig")
    node = state.store.get("nodes", None, "training-node-1")
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "56"
    assert node["metadata"]["labels"]["nvidia.com/mig.strategy"] == "single"
    assert node["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"
    gpus = state.inventory.gpus["training-node-1"]
    assert len({g.uuid for g in gpus}) == 56 and all(g.uuid.startswith("MIG-") for g in gpus)
    assert {g.memory_mib for g in gpus} == {10240}


def test_a_mig_profile_must_name_slices_and_memory():
    assert Sharing(strategy="mig", mig_profile="3g.40gb").per_card == 2
    with pytest.raises(ValidationError, match="expected <g>g.<m>gb"):
        Sharing(strategy="mig", mig_profile="big")


def submit(state, name: str, ns: str, alloc_mib: int) -> None:
    """A gpumem pod allocating ``alloc_mib`` without pausing between its steps (nothing here watches it grow)."""
    env = [{"name": "WORKLOAD_MODE", "value": "gpumem"}, {"name": "WORKLOAD_GPU_MEM_MIB", "value": str(alloc_mib)},
           {"name": "WORKLOAD_DURATION_SECONDS", "value": "600"}, {"name": "WORKLOAD_STEP_SLEEP", "value": "0"}]
    pool = "inference" if state.config.pool("inference").sharing.strategy != "none" else "training"
    spec = {"tolerations": TOLERATE_GPU, "nodeSelector": {"gpupoc.io/pool": pool}, "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "gpupoc/workload:1.0", "env": env,
                            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}
    pod = admit_pod(state, {"metadata": {"name": name}, "spec": spec}, ns)
    state.store.create("pods", pod)
    after_pod_created(state, pod)
    state.scheduler.run_pass()


def visible(state, ns: str, name: str) -> str:
    return state.inventory.held_by((ns, name))[0].uuid


def held(state, uuid: str, owner: str) -> int:
    return sum(e["mib"] for e in read_ledger(ledger_dir(state) / f"{uuid}.json").values() if e["owner"] == owner)


def phase(state, ns: str, name: str) -> str:
    return state.store.get("pods", ns, name)["status"].get("phase", "")


def observe(state, card: str, greedy: tuple[str, str]) -> dict:
    """What the neighbours look like now (the processes are stopped once the kubelet shuts down)."""
    return {"server": (phase(state, SERVING, "server"), held(state, card, f"{SERVING}/server")),
            "greedy": phase(state, *greedy)}


async def settle(state, steps) -> None:
    """For each (pod to submit, condition, what): submit it, then run the kubelet until the condition holds."""
    kubelet = Kubelet(state)
    try:
        for pod, until, what in steps:
            if pod is not None:
                submit(state, *pod)
            await drive(kubelet, until, what=what)
    finally:
        await kubelet.shutdown()


def test_under_time_slicing_an_over_allocation_takes_the_neighbours_memory(tmp_path):
    state, seen = shipped(tmp_path, "time-slicing"), {}
    submit(state, "server", SERVING, 2000)
    card = visible(state, SERVING, "server")
    asyncio.run(settle(state, [
        (None, lambda: held(state, card, f"{SERVING}/server") == 2000, "the server holding 2000 MiB"),
        (("greedy", NLP, 46068 - 2000), lambda: held(state, card, f"{NLP}/greedy") == 44068,
         "the greedy container to take the rest of the card"),  # nothing refuses it
        (("late", SERVING, 256), lambda: phase(state, SERVING, "late") == "Failed"
         and bool(seen.update(observe(state, card, (NLP, "greedy")))) is False,
         "the late neighbour to run out of memory")]))
    assert visible(state, NLP, "greedy") == card  # replicas of one card
    assert seen == {"server": ("Running", 2000), "greedy": "Running"}
    lines = "\n".join(t for _, t in state.logs.get(SERVING, "late", "main").lines)
    assert f"device 0 {card}: 46068 MiB total, 0 MiB free" in lines  # the late one was on the same card
    assert "CUDA out of memory" in lines and "HAMI-core" not in lines


def test_under_mig_an_over_allocation_fails_only_at_its_own_instance(tmp_path):
    state, seen = shipped(tmp_path, "mig"), {}
    submit(state, "server", SERVING, 2000)
    server = visible(state, SERVING, "server")
    asyncio.run(settle(state, [
        (None, lambda: held(state, server, f"{SERVING}/server") == 2000, "the server holding 2000 MiB"),
        (("greedy", NLP, 12000), lambda: phase(state, NLP, "greedy") == "Failed"  # past its 1g.10gb instance
         and bool(seen.update(observe(state, server, (NLP, "greedy")))) is False,
         "the greedy container to fail at its instance")]))
    lines = "\n".join(t for _, t in state.logs.get(NLP, "greedy", "main").lines)
    assert server.startswith("MIG-") and f"device 0 {server}" not in lines and "device 0 MIG-" in lines
    assert "10240 MiB total" in lines and "CUDA out of memory" in lines and "HAMI-core" not in lines
    assert seen == {"server": ("Running", 2000), "greedy": "Failed"}
