"""HAMi mode: the webhook, node registration, vGPU placement, annotations, events, policies, device plugin,
and the sharing faults."""

from __future__ import annotations

import json

from gpupoc.kube import hami as HAMI
from gpupoc.kube.resources import GPU, GPUCORES, GPUMEM
from gpupoc.sim import hami_devices as H
from gpupoc.sim.admission import admit_pod, after_pod_created

from .gang_helpers import SERVING, TOLERATE_GPU, events, mode_state, run

POOL = {"gpupoc.io/pool": "inference"}


def vgpu_pod(state, name: str, mem: int | None = 3000, ns: str = SERVING, annotations: dict | None = None,
             cores: int | None = None, gpus: str | None = "1", scheduler: str | None = None) -> dict:
    limits = {}
    if gpus is not None:
        limits[GPU] = gpus
    if mem is not None:
        limits[GPUMEM] = str(mem)
    if cores is not None:
        limits[GPUCORES] = str(cores)
    spec = {"tolerations": TOLERATE_GPU, "nodeSelector": POOL,
            "containers": [{"name": "main", "image": "gpupoc/virtual:1", "resources": {"limits": limits}}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    pod = admit_pod(state, {"metadata": {"name": name, "annotations": annotations or {}}, "spec": spec}, ns)
    state.store.create("pods", pod)
    after_pod_created(state, pod)
    return pod


def stored(state, name: str, ns: str = SERVING) -> dict:
    return state.store.get("pods", ns, name)


def messages(state, name: str, reason: str) -> list[str]:
    return [e["message"] for e in events(state, "Pod", name, reason)]


def test_nodes_register_their_cards_and_advertise_vgpus(tmp_path):
    state = mode_state(tmp_path, "hami")
    node = state.store.get("nodes", None, "inference-node-1")
    cards = json.loads(node["metadata"]["annotations"][HAMI.NODE_REGISTER])
    assert [c["devmem"] for c in cards] == [46068] * 4 and {c["count"] for c in cards} == {10}
    assert node["metadata"]["annotations"][HAMI.NODE_HANDSHAKE].startswith("Reported ")
    assert node["status"]["capacity"][GPU] == "40" and node["status"]["allocatable"][GPU] == "40"
    assert state.store.get("nodes", None, "training-node-1")["status"]["capacity"][GPU] == "80"


def test_a_vgpu_pod_binds_with_hamis_annotations_and_events(tmp_path):
    state = mode_state(tmp_path, "hami")
    vgpu_pod(state, "a")
    run(state)
    pod = stored(state, "a")
    notes = pod["metadata"]["annotations"]
    assert pod["spec"]["schedulerName"] == HAMI.SCHEDULER_NAME and pod["spec"]["nodeName"] == notes[HAMI.ASSIGNED_NODE]
    uuid = H.decode_pod_devices(notes[HAMI.ALLOCATED])[0][0].uuid
    assert notes[HAMI.ALLOCATED] == f"{uuid},NVIDIA,3000,0:;" == notes[HAMI.TO_ALLOCATE]
    assert notes[HAMI.BIND_PHASE] == "allocating"
    node = pod["spec"]["nodeName"]
    assert messages(state, "a", "FilteringSucceed")[0].startswith(f"find fit node({node}), 0 nodes not fit, 2 nodes fit(")
    assert messages(state, "a", "BindingSucceed") == [f"Successfully binding node [{node}] to {SERVING}/a"]
    assert events(state, "Pod", "a", "Scheduled")[0]["source"]["component"] == HAMI.SCHEDULER_NAME


def test_more_memory_than_any_card_waits_with_card_insufficient_memory(tmp_path):
    state = mode_state(tmp_path, "hami")
    vgpu_pod(state, "big", mem=50000)
    run(state)
    pod = stored(state, "big")
    assert not pod["spec"].get("nodeName")
    assert messages(state, "big", "FilteringFailed") == [
        "2 nodes CardInsufficientMemory(inference-node-1,inference-node-2)", "no available node, 2 nodes do not meet"]
    cond = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    assert cond["reason"] == "Unschedulable" and "2 4/4 CardInsufficientMemory" in cond["message"]
    run(state)  # the same failure is not reported again within the retry interval
    assert len(messages(state, "big", "FilteringFailed")) == 2


def test_cards_fill_by_memory_and_the_next_slice_goes_elsewhere(tmp_path):
    state = mode_state(tmp_path, "hami")
    vgpu_pod(state, "a", mem=40000, annotations={HAMI.GPU_POLICY: "binpack"})
    run(state)
    uuid = H.decode_pod_devices(stored(state, "a")["metadata"]["annotations"][HAMI.ALLOCATED])[0][0].uuid
    vgpu_pod(state, "b", mem=10000, annotations={HAMI.USE_GPUUUID: uuid})
    vgpu_pod(state, "c", mem=6000, annotations={HAMI.USE_GPUUUID: uuid})
    run(state)
    assert not stored(state, "b")["spec"].get("nodeName")
    assert "CardInsufficientMemory" in messages(state, "b", "FilteringFailed")[0]
    assert stored(state, "c")["spec"]["nodeName"] == stored(state, "a")["spec"]["nodeName"]


def test_binpack_shares_a_card_and_spread_does_not(tmp_path):
    state = mode_state(tmp_path, "hami")
    for name in ("p1", "p2"):
        vgpu_pod(state, name, mem=2000, annotations={HAMI.GPU_POLICY: "binpack"})
        run(state)
    for name in ("s1", "s2"):
        vgpu_pod(state, name, mem=2000, annotations={HAMI.GPU_POLICY: "spread", HAMI.NODE_POLICY: "binpack"})
        run(state)

    def card_of(name):
        return H.decode_pod_devices(stored(state, name)["metadata"]["annotations"][HAMI.ALLOCATED])[0][0].uuid

    assert card_of("p1") == card_of("p2")
    assert card_of("s1") != card_of("s2")


def test_a_gpu_type_nobody_has_is_a_type_mismatch(tmp_path):
    state = mode_state(tmp_path, "hami")
    vgpu_pod(state, "a100", annotations={HAMI.USE_GPUTYPE: "A100"})
    run(state)
    assert messages(state, "a100", "FilteringFailed")[0] == (
        "2 nodes CardTypeMismatch(inference-node-1,inference-node-2)")


def test_the_webhook_adds_a_vgpu_and_keeps_other_schedulers(tmp_path):
    state = mode_state(tmp_path, "hami")
    mem_only = vgpu_pod(state, "m", mem=1000, gpus=None)
    assert mem_only["spec"]["schedulerName"] == HAMI.SCHEDULER_NAME
    assert mem_only["spec"]["containers"][0]["resources"]["limits"][GPU] == "1"
    other = vgpu_pod(state, "o", scheduler="volcano")
    assert other["spec"]["schedulerName"] == "volcano"
    plain = admit_pod(state, {"metadata": {"name": "cpu"}, "spec": {"containers": [
        {"name": "c", "image": "busybox"}]}}, SERVING)
    assert plain["spec"]["schedulerName"] == "default-scheduler"


def test_the_device_plugin_injects_the_memory_limit(tmp_path):
    state = mode_state(tmp_path, "hami")
    vgpu_pod(state, "a", mem=3000, cores=30)
    run(state)
    visible, env = state.device_plugin.allocate(stored(state, "a"), "main")
    assert visible.startswith("GPU-") and env["CUDA_DEVICE_MEMORY_LIMIT_0"] == "3000m"
    assert env["CUDA_DEVICE_SM_LIMIT"] == "30" and env["CUDA_DEVICE_MEMORY_SHARED_CACHE"].endswith(".cache")
    assert stored(state, "a")["metadata"]["annotations"][HAMI.BIND_PHASE] == "success"


def test_gpumem_not_enforced_injects_no_limit(tmp_path):
    state = mode_state(tmp_path, "hami", faults=("gpumem-not-enforced",))
    vgpu_pod(state, "a")
    run(state)
    _, env = state.device_plugin.allocate(stored(state, "a"), "main")
    assert "CUDA_DEVICE_MEMORY_LIMIT_0" not in env


def test_vgpu_overcommit_places_more_memory_than_the_card_has(tmp_path):
    for faults, second_binds in (((), False), (("vgpu-overcommit",), True)):
        state = mode_state(tmp_path / str(bool(faults)), "hami", faults=faults)
        vgpu_pod(state, "a", mem=30000)
        run(state)
        uuid = H.decode_pod_devices(stored(state, "a")["metadata"]["annotations"][HAMI.ALLOCATED])[0][0].uuid
        vgpu_pod(state, "b", mem=30000, annotations={HAMI.USE_GPUUUID: uuid})
        run(state)
        assert bool(stored(state, "b")["spec"].get("nodeName")) is second_binds, faults


def test_slice_leak_keeps_a_finished_pods_slice(tmp_path):
    for faults, freed in (((), True), (("slice-leak",), False)):
        state = mode_state(tmp_path / str(bool(faults)), "hami", faults=faults)
        vgpu_pod(state, "a", mem=40000)
        run(state)
        pod = stored(state, "a")
        uuid = H.decode_pod_devices(pod["metadata"]["annotations"][HAMI.ALLOCATED])[0][0].uuid
        pod["status"]["phase"] = "Succeeded"
        state.store.update("pods", pod)
        vgpu_pod(state, "b", mem=40000, annotations={HAMI.USE_GPUUUID: uuid})
        run(state)
        assert bool(stored(state, "b")["spec"].get("nodeName")) is freed, faults


def test_metrics_carry_hamis_names_for_cards_and_slices(tmp_path):
    from gpupoc.sim.metrics import render_dcgm

    state = mode_state(tmp_path, "hami")
    vgpu_pod(state, "a", mem=3000, cores=30)
    run(state)
    uuid = H.decode_pod_devices(stored(state, "a")["metadata"]["annotations"][HAMI.ALLOCATED])[0][0].uuid
    text = render_dcgm(state)
    assert "DCGM_FI_DEV_GPU_UTIL{" in text  # dcgm-exporter's series stay
    slice_labels = f'namespace="{SERVING}",pod="a",container="main",vdevice_index="0",device_uuid="{uuid}"'
    assert f"hami_vgpu_memory_limit_bytes{{{slice_labels}}} {3000 * 2**20}" in text
    assert f"hami_vgpu_memory_used_bytes{{{slice_labels}}} 0" in text
    node = stored(state, "a")["spec"]["nodeName"]
    assert (f'hami_gpu_memory_allocated_bytes{{node="{node}",device_uuid="{uuid}",device_index="0",'
            f'device_cores="30",device_type="NVIDIA-NVIDIA L40S"}} {3000 * 2**20}') in text
    assert f'hami_gpu_shared_count{{node="{node}",device_uuid="{uuid}",device_index="0",' in text


def test_dcgm_shows_a_card_shared_through_slices_with_its_pod(tmp_path):
    from gpupoc.sim.inventory import Telemetry
    from gpupoc.sim.metrics import render_dcgm

    state = mode_state(tmp_path, "hami")
    vgpu_pod(state, "a", mem=3000)
    run(state)
    uuid = H.decode_pod_devices(stored(state, "a")["metadata"]["annotations"][HAMI.ALLOCATED])[0][0].uuid
    state.inventory.telemetry[(SERVING, "a")] = Telemetry(util=70.0, mem_mib=2500.0)
    util = [line for line in render_dcgm(state).splitlines()
            if line.startswith("DCGM_FI_DEV_GPU_UTIL{") and f'UUID="{uuid}"' in line]
    assert util == [next(line for line in util if f'namespace="{SERVING}",pod="a"' in line)]
    assert util[0].endswith(" 70")
    others = [line for line in render_dcgm(state).splitlines()
              if line.startswith("DCGM_FI_DEV_GPU_UTIL{") and 'pod="a"' in line]
    assert len(others) == 1  # only the card the slice is on


def test_the_scheduler_serves_each_slices_grant_and_keeps_a_leaked_one(tmp_path):
    from gpupoc.sim.inventory import Telemetry
    from gpupoc.sim.metrics import render_dcgm

    for faults, kept in (((), False), (("slice-leak",), True)):
        state = mode_state(tmp_path / str(bool(faults)), "hami", faults=faults)
        vgpu_pod(state, "a", mem=3000, cores=30)
        run(state)
        pod = stored(state, "a")
        uuid = H.decode_pod_devices(pod["metadata"]["annotations"][HAMI.ALLOCATED])[0][0].uuid
        state.inventory.telemetry[(SERVING, "a")] = Telemetry(util=20.0, mem_mib=2500.0)
        labels = (f'namespace="{SERVING}",node="{pod["spec"]["nodeName"]}",pod="a",container_index="0",'
                  f'device_uuid="{uuid}"')
        text = render_dcgm(state)
        assert f"hami_vgpu_memory_allocated_bytes{{{labels}}} {3000 * 2**20}" in text
        assert f"hami_vgpu_core_allocated_ratio{{{labels}}} 30" in text
        assert f'hami_vgpu_memory_used_bytes{{namespace="{SERVING}",pod="a",container="main"' in text
        assert f"{2500 * 2**20}" in text  # a virtual pod books nothing: its claimed memory is what it uses
        pod["status"]["phase"] = "Succeeded"
        state.store.update("pods", pod)
        after = render_dcgm(state)
        assert ("hami_vgpu_memory_allocated_bytes{" + labels in after) is kept, faults
        assert 'hami_vgpu_memory_used_bytes{namespace="' + SERVING + '",pod="a"' not in after
