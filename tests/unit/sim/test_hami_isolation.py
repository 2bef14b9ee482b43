"""GPU-memory isolation through the kubelet's process runtime: two tenants' workloads on one card, one asking
past its HAMi slice. With HAMi-core's limit only the over-allocating container fails; without it
(``gpumem-not-enforced``) the over-allocation succeeds."""

from __future__ import annotations

import asyncio

import pytest

from gpupoc.kube import hami as HAMI
from gpupoc.kube.resources import GPU, GPUMEM
from gpupoc.sim import hami_devices as H
from gpupoc.sim.admission import admit_pod, after_pod_created
from gpupoc.sim.controllers.gpu_driver import ledger_dir
from gpupoc.sim.controllers.kubelet import Kubelet
from gpupoc.sim.hami_metrics import render_hami
from gpupoc.workload.cuda import read_ledger

from .gang_helpers import NLP, SERVING, TOLERATE_GPU, mode_state, run
from .kubelet_helpers import drive

pytestmark = pytest.mark.timeout(300)  # a hang guard: drive() fails first, naming what it awaited


def workload_pod(state, name: str, ns: str, alloc_mib: int, uuid: str | None = None) -> None:
    env = [{"name": "WORKLOAD_MODE", "value": "gpumem"}, {"name": "WORKLOAD_GPU_MEM_MIB", "value": str(alloc_mib)},
           {"name": "WORKLOAD_DURATION_SECONDS", "value": "600"}]
    spec = {"tolerations": TOLERATE_GPU, "nodeSelector": {"gpupoc.io/pool": "inference"}, "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "gpupoc/workload:1.0", "env": env,
                            "resources": {"limits": {GPU: "1", GPUMEM: "3000"}}}]}
    annotations = {HAMI.GPU_POLICY: "binpack"} if uuid is None else {HAMI.USE_GPUUUID: uuid}
    pod = admit_pod(state, {"metadata": {"name": name, "annotations": annotations}, "spec": spec}, ns)
    state.store.create("pods", pod)
    after_pod_created(state, pod)
    run(state)


def card_of(state, ns: str, name: str) -> str:
    return H.decode_pod_devices(state.store.get("pods", ns, name)["metadata"]["annotations"][HAMI.ALLOCATED])[0][0].uuid


def phase(state, ns: str, name: str) -> str:
    return state.store.get("pods", ns, name)["status"].get("phase", "")


def held(state, uuid: str, owner: str) -> int:
    return sum(e["mib"] for e in read_ledger(ledger_dir(state) / f"{uuid}.json").values() if e["owner"] == owner)


def log_text(state, ns: str, name: str) -> str:
    lg = state.logs.get(ns, name, "main")
    return "" if lg is None else "\n".join(t for _, t in lg.lines)


def scenario(tmp_path, faults=()) -> tuple:
    state = mode_state(tmp_path, "hami", faults=faults)
    workload_pod(state, "server", SERVING, 2000)
    uuid = card_of(state, SERVING, "server")
    workload_pod(state, "greedy", NLP, 6000, uuid)
    assert card_of(state, NLP, "greedy") == uuid  # two tenants, one physical card
    return state, uuid


async def settle(state, uuid: str, until) -> None:
    kubelet = Kubelet(state)
    try:
        await drive(kubelet, lambda: held(state, uuid, f"{SERVING}/server") == 2000, what="the server holding 2000 MiB")
        await drive(kubelet, until, what="the greedy container to fail or hold its memory")
    finally:
        await kubelet.shutdown()


def test_hami_core_fails_only_the_over_allocating_container(tmp_path):
    state, uuid = scenario(tmp_path)
    observed = {}

    def greedy_done() -> bool:
        if phase(state, NLP, "greedy") != "Failed":
            return False
        observed.update(server_phase=phase(state, SERVING, "server"),
                        server_mib=held(state, uuid, f"{SERVING}/server"), metrics=render_hami(state))
        return True

    asyncio.run(settle(state, uuid, greedy_done))
    text = log_text(state, NLP, "greedy")
    assert f"Device 0 OOM {3072 * 2**20} / {3000 * 2**20}" in text and "[HAMI-core ERROR (pid:" in text
    assert "CUDA out of memory" in text
    metrics = observed.pop("metrics")
    assert observed == {"server_phase": "Running", "server_mib": 2000}
    server = f'namespace="{SERVING}",pod="server",container="main",vdevice_index="0",device_uuid="{uuid}"'
    assert f"hami_vgpu_memory_used_bytes{{{server}}} {2000 * 2**20}" in metrics


def test_without_the_limit_the_over_allocation_succeeds(tmp_path):
    state, uuid = scenario(tmp_path, faults=("gpumem-not-enforced",))
    asyncio.run(settle(state, uuid, lambda: held(state, uuid, f"{NLP}/greedy") == 6000))
    assert phase(state, NLP, "greedy") == "Running" and "HAMI-core" not in log_text(state, NLP, "greedy")
