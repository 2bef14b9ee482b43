"""sim/metrics.render_dcgm: dcgm-exporter series for every simulated GPU, following pod telemetry."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from gpupoc.sim import kube_state, metrics
from gpupoc.sim.inventory import Telemetry

FIELDS = [f[0] for f in metrics.DCGM_FIELDS]
GPU_LABELS = ["gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"]


def _gpu(state, node, index):
    return state.inventory.gpus[node][index]


def test_every_gpu_has_one_series_per_field(state, expo):
    samples, helps, types = expo.parse(metrics.render_dcgm(state, now=0.0))
    total = sum(len(g) for g in state.inventory.gpus.values())
    assert total == 32
    for field in FIELDS:
        assert len(expo.series(samples, field)) == total, field
        assert field in helps and field in types
    assert types["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] == "counter"
    assert types["DCGM_FI_DEV_GPU_UTIL"] == "gauge"
    assert helps["DCGM_FI_DEV_GPU_UTIL"] == "GPU utilization (in %)."


def test_free_gpu_is_idle_without_pod_labels(state, expo):
    samples, _, _ = expo.parse(metrics.render_dcgm(state, now=0.0))
    g = _gpu(state, "inference-node-2", 3)
    (labels, util), = expo.series(samples, "DCGM_FI_DEV_GPU_UTIL", UUID=g.uuid)
    assert [k for k in labels] == GPU_LABELS
    assert labels == {"gpu": "3", "UUID": g.uuid, "pci_bus_id": g.pci_bus_id, "device": "nvidia3",
                      "modelName": "NVIDIA L40S", "Hostname": "inference-node-2"}
    assert util == 0
    used = expo.series(samples, "DCGM_FI_DEV_FB_USED", UUID=g.uuid)[0][1]
    free = expo.series(samples, "DCGM_FI_DEV_FB_FREE", UUID=g.uuid)[0][1]
    reserved = expo.series(samples, "DCGM_FI_DEV_FB_RESERVED", UUID=g.uuid)[0][1]
    assert used == 0 and used + free + reserved == g.memory_mib
    power = expo.series(samples, "DCGM_FI_DEV_POWER_USAGE", UUID=g.uuid)[0][1]
    assert power == g.idle_power_w


def test_allocated_gpus_report_holder_labels_in_exporter_order_and_pod_util(state, expo):
    state.inventory.allocate("training-node-1", ("team-vision", "train-0"), "trainer", 2)
    state.inventory.telemetry[("team-vision", "train-0")] = Telemetry(util=80, mem_mib=30000)
    samples, _, _ = expo.parse(metrics.render_dcgm(state, now=0.0))
    rows = expo.series(samples, "DCGM_FI_DEV_GPU_UTIL", pod="train-0")
    assert len(rows) == 2
    for labels, util in rows:
        assert list(labels) == GPU_LABELS + ["container", "namespace", "pod"]
        assert (labels["container"], labels["namespace"]) == ("trainer", "team-vision")
        assert util == 80  # the pod's utilization on each of its GPUs, not divided
    assert {v for _, v in expo.series(samples, "DCGM_FI_DEV_FB_USED", pod="train-0")} == {30000}
    h100 = _gpu(state, "training-node-1", 0)
    power = expo.series(samples, "DCGM_FI_DEV_POWER_USAGE", UUID=h100.uuid)[0][1]
    assert power == pytest.approx(72 + 0.8 * (700 - 72))
    assert expo.series(samples, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", UUID=h100.uuid)[0][1] == pytest.approx(0.784)
    busy_temp = expo.series(samples, "DCGM_FI_DEV_GPU_TEMP", UUID=h100.uuid)[0][1]
    idle_temp = expo.series(samples, "DCGM_FI_DEV_GPU_TEMP", UUID=_gpu(state, "training-node-1", 3).uuid)[0][1]
    assert busy_temp > idle_temp + 20


def test_allocated_gpu_of_silent_pod_reads_idle_with_small_memory(state, expo):
    state.inventory.allocate("training-node-2", ("team-nlp", "idle-0"), "main", 1)
    samples, _, _ = expo.parse(metrics.render_dcgm(state, now=0.0))
    (labels, util), = expo.series(samples, "DCGM_FI_DEV_GPU_UTIL", pod="idle-0")
    assert util == 0 and labels["namespace"] == "team-nlp"
    used = expo.series(samples, "DCGM_FI_DEV_FB_USED", pod="idle-0")[0][1]
    assert 0 < used < 100


def test_telemetry_is_clamped_to_the_gpu(state, expo):
    state.inventory.allocate("inference-node-1", ("team-serving", "srv"), "srv", 1)
    state.inventory.telemetry[("team-serving", "srv")] = Telemetry(util=250, mem_mib=10**6)
    samples, _, _ = expo.parse(metrics.render_dcgm(state, now=0.0))
    assert expo.series(samples, "DCGM_FI_DEV_GPU_UTIL", pod="srv")[0][1] == 100
    free = expo.series(samples, "DCGM_FI_DEV_FB_FREE", pod="srv")[0][1]
    assert free == 0


def test_xid_carries_error_code_and_message_only_when_set(state, expo):
    g = _gpu(state, "training-node-3", 5)
    g.xid = 79
    samples, _, _ = expo.parse(metrics.render_dcgm(state, now=0.0))
    (labels, value), = expo.series(samples, "DCGM_FI_DEV_XID_ERRORS", UUID=g.uuid)
    assert value == 79
    assert labels["err_code"] == "79" and labels["err_msg"] == "GPU has fallen off the bus"
    other = expo.series(samples, "DCGM_FI_DEV_XID_ERRORS", UUID=_gpu(state, "training-node-3", 4).uuid)[0]
    assert other[1] == 0 and "err_code" not in other[0]


def test_energy_counter_integrates_power_over_time(state, expo):
    state.inventory.allocate("training-node-1", ("team-vision", "t"), "c", 1)
    state.inventory.telemetry[("team-vision", "t")] = Telemetry(util=50, mem_mib=1000)
    g = _gpu(state, "training-node-1", 0)
    idle = _gpu(state, "training-node-1", 1)
    metrics.render_dcgm(state, now=100.0)
    samples, _, _ = expo.parse(metrics.render_dcgm(state, now=110.0))
    busy_mj = expo.series(samples, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", UUID=g.uuid)[0][1]
    idle_mj = expo.series(samples, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", UUID=idle.uuid)[0][1]
    assert busy_mj == pytest.approx((72 + 0.5 * 628) * 10 * 1000, abs=1)
    assert idle_mj == pytest.approx(72 * 10 * 1000, abs=1)
    samples, _, _ = expo.parse(metrics.render_dcgm(state, now=105.0))  # clock went backwards: no change
    assert expo.series(samples, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", UUID=g.uuid)[0][1] == busy_mj


def test_label_values_are_escaped(state, expo):
    state.inventory.allocate("training-node-1", ("team-vision", "p"), 'we"ird\\name', 1)
    text = metrics.render_dcgm(state, now=0.0)
    assert 'container="we\\"ird\\\\name"' in text
    expo.parse(text)


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed (scripts/install-monitoring.sh)")
def test_promtool_parses_the_exposition(state):
    state.inventory.allocate("training-node-1", ("team-vision", "train-0"), "trainer", 2)
    state.inventory.gpus["training-node-2"][0].xid = 79
    text = metrics.render_dcgm(state, now=0.0) + kube_state.render_kube_state(state)
    out = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    # dcgm-exporter's camelCase labels (modelName, UUID) and its energy counter's name are real lint findings;
    # anything else (a parse error above all) is a format error
    tolerated = ("should be written in 'snake_case'",
                 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter metrics should have "_total" suffix')
    problems = [line for line in (out.stdout + out.stderr).splitlines()
                if line.strip() and not any(t in line for t in tolerated)]
    assert not problems, problems


def test_labels_follow_release_and_reallocation(state, expo):
    state.inventory.allocate("training-node-1", ("team-vision", "a"), "c", 1)
    metrics.render_dcgm(state, now=0.0)
    state.inventory.release(("team-vision", "a"))
    state.inventory.allocate("training-node-1", ("team-nlp", "b"), "d", 1)
    samples, _, _ = expo.parse(metrics.render_dcgm(state, now=1.0))
    uuid = _gpu(state, "training-node-1", 0).uuid
    (labels, _), = expo.series(samples, "DCGM_FI_DEV_GPU_UTIL", UUID=uuid)
    assert (labels["namespace"], labels["pod"], labels["container"]) == ("team-nlp", "b", "d")
    assert not expo.series(samples, "DCGM_FI_DEV_GPU_UTIL", pod="a")
