"""kube/dcgm: a GPU's reading from its holder's telemetry, a virtual workload's GPU use from its env, the series
in dcgm-exporter's label order, and energy: shared by the simulated cluster and the real-cluster exporter."""

from __future__ import annotations

from gpupoc.kube import dcgm
from gpupoc.kube.dcgm import Gpu, Telemetry
from tests.exposition import parse_exposition, series

GPU_LABELS = ["gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"]


def card(index=0, memory=81559, holder=None, **kw) -> Gpu:
    return Gpu(node="training-node-1", index=index, uuid=f"GPU-{index}", pci_bus_id=dcgm.pci_bus_id(index),
               model_name="NVIDIA H100 80GB HBM3", memory_mib=memory, max_power_w=700, idle_power_w=72,
               pool="training", holder=holder, container="main" if holder else None, **kw)


def test_a_virtual_workloads_gpu_use_comes_from_its_env_clamped():
    assert dcgm.virtual_telemetry({"WORKLOAD_GPU_UTIL": "85", "WORKLOAD_GPU_MEM_MIB": "30000"}) == Telemetry(85, 30000)
    assert dcgm.virtual_telemetry({"WORKLOAD_GPU_UTIL": "140", "WORKLOAD_GPU_MEM_MIB": "-5"}) == Telemetry(100, 0)
    assert dcgm.virtual_telemetry({"WORKLOAD_GPU_UTIL": "lots"}) == Telemetry(0, 0)


def test_a_held_card_reads_its_pods_telemetry_and_a_silent_pod_holds_a_small_context():
    held = card(holder=("team-vision", "train-0"))
    r = dcgm.read_gpu(held, Telemetry(80, 30000))
    assert (r.util, r.mem_used_mib, r.mem_reserved_mib) == (80, 30000, 555)
    assert r.mem_used_mib + r.mem_free_mib + r.mem_reserved_mib == 81559
    assert r.power_w == 574.4  # idle 72 W + 80 % of the way to 700 W
    silent = dcgm.read_gpu(held, None)
    assert (silent.util, silent.mem_used_mib) == (0, dcgm.SILENT_POD_MEM_MIB)
    assert dcgm.read_gpu(card(), Telemetry(80, 30000)).util == 0  # a free card ignores any telemetry


def test_a_claim_beyond_the_card_is_capped_and_an_unknown_size_shows_the_claim():
    assert dcgm.read_gpu(card(holder=("ns", "p")), Telemetry(50, 10**6)).mem_used_mib == 81559 - 555
    unknown = dcgm.read_gpu(card(memory=0, holder=("ns", "p")), Telemetry(50, 12000))
    assert (unknown.mem_used_mib, unknown.mem_free_mib, unknown.mem_reserved_mib) == (12000, 0, 0)


def test_series_carry_the_holders_labels_after_the_cards_in_exporter_order():
    cards = [card(0, holder=("team-vision", "train-0")), card(1)]
    samples, _, types = parse_exposition(dcgm.dcgm_exposition(
        cards, {("team-vision", "train-0"): Telemetry(80, 30000)}).render())
    (labels, util), = series(samples, "DCGM_FI_DEV_GPU_UTIL", pod="train-0")
    assert list(labels) == GPU_LABELS + ["container", "namespace", "pod"] and util == 80
    (free_labels, _), = series(samples, "DCGM_FI_DEV_GPU_UTIL", UUID="GPU-1")
    assert list(free_labels) == GPU_LABELS
    assert {n for n, _, _ in samples} == {f[0] for f in dcgm.DCGM_FIELDS}
    assert types["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] == "counter"


def test_a_time_slicing_replica_is_not_a_series_and_an_xid_gets_its_message():
    cards = [card(0, xid=79), card(0, replica=1)]
    samples, _, _ = parse_exposition(dcgm.dcgm_exposition(cards, {}).render())
    (labels, value), = series(samples, "DCGM_FI_DEV_XID_ERRORS")
    assert (labels["err_code"], labels["err_msg"], value) == ("79", "GPU has fallen off the bus", 79)


def test_energy_adds_power_times_seconds_and_a_replica_adds_nothing():
    cards = [card(0), card(0, replica=1)]
    dcgm.add_energy(cards, {}, 2.0)
    assert [c.energy_mj for c in cards] == [72 * 2.0 * 1000.0, 0.0]
    dcgm.add_energy(cards, {}, 0.0)
    assert cards[0].energy_mj == 144000.0
