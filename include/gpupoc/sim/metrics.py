"""The simulated GPUs as NVIDIA dcgm-exporter exposes them.

``render_dcgm`` serves ``/metrics``: one series per simulated GPU and field, labels in the exporter's order,
``container``/``namespace``/``pod`` for allocated GPUs as with ``--kubernetes``. ``kube_state`` serves
``/metrics/kube-state``; both write the text format of ``exposition``.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, replace

from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.exposition import Exposition, label_str
from gpupoc.sim.inventory import Gpu

# Framebuffer the driver keeps for itself (H100 80GB HBM3: 555 of 81559 MiB).
RESERVED_FRACTION = 0.0068
SILENT_POD_MEM_MIB = 4.0  # an allocated GPU whose pod reports nothing still holds a small context
IDLE_TEMP_C = 31.0
TEMP_PER_UTIL_C = 0.42  # 100 % -> ~73 C

XID_MESSAGES = {
    13: "Graphics Engine Exception",
    31: "GPU memory page fault",
    43: "GPU stopped processing",
    45: "Preemptive cleanup, due to previous errors",
    48: "DBE (Double Bit Error) ECC Error",
    63: "ECC page retirement or row remapping recording event",
    64: "ECC page retirement or row remapper recording failure",
    74: "NVLINK Error",
    79: "GPU has fallen off the bus",
    92: "High single-bit ECC error rate",
    94: "Contained ECC error",
    95: "Uncontained ECC error",
    119: "GSP RPC Timeout",
}

# (name, type, help) in dcgm-exporter's default-counters.csv wording.
DCGM_FIELDS = [
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB)."),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "gauge",
     "Ratio of cycles the device memory interface is active sending or receiving data."),
]


# -- dcgm-exporter -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class GpuReading:
    """What one GPU reports at one moment."""

    util: float
    mem_used_mib: float
    mem_free_mib: float
    mem_reserved_mib: float
    power_w: float
    temp_c: float


def read_gpu(state: ClusterState, gpu: Gpu) -> GpuReading:
    """The GPU's reading: its holder pod's telemetry (same util and memory on each of the pod's GPUs)."""
    reserved = float(round(gpu.memory_mib * RESERVED_FRACTION))
    usable = gpu.memory_mib - reserved
    util, mem = 0.0, 0.0
    if gpu.holder is not None:
        tel = state.inventory.telemetry.get(gpu.holder)
        if tel is None:
            mem = SILENT_POD_MEM_MIB
        else:
            util = min(max(float(tel.util), 0.0), 100.0)
            mem = min(max(float(tel.mem_mib), 0.0), usable)
    power = gpu.idle_power_w + util / 100.0 * (gpu.max_power_w - gpu.idle_power_w)
    temp = IDLE_TEMP_C + gpu.index % 3 + TEMP_PER_UTIL_C * util
    return GpuReading(util, float(round(mem)), float(round(usable - mem)), reserved, round(power, 3), round(temp))


def integrate_energy(state: ClusterState, now: float | None = None) -> None:
    """Add each GPU's current power times the time since the last call to its energy counter (mJ)."""
    inv = state.inventory
    now = time.monotonic() if now is None else now
    last = inv.energy_sampled_at
    inv.energy_sampled_at = now
    if last is None or now <= last:
        return
    dt = now - last
    holders = _slice_holders(state)
    for gpus in inv.gpus.values():
        for g in gpus:
            if not g.replica:  # a time-slicing replica is the same card
                g.energy_mj += read_gpu(state, _as_shown(g, holders)).power_w * dt * 1000.0


def _gpu_labels(gpu: Gpu) -> list[tuple[str, str]]:
    index = gpu.card if gpu.card >= 0 else gpu.index  # a MIG instance or a replica: its card's index
    return [("gpu", str(index)), ("UUID", gpu.uuid), ("pci_bus_id", gpu.pci_bus_id),
            ("device", f"nvidia{index}"), ("modelName", gpu.model_name), ("Hostname", gpu.node)]


def _pod_labels(gpu: Gpu) -> list[tuple[str, str]]:
    if gpu.holder is None:
        return []
    ns, pod = gpu.holder
    return [("container", gpu.container or ""), ("namespace", ns), ("pod", pod)]


# Store -> {GPU uuid: ((holder, container), GPU labels, pod labels)}
_GPU_LABEL_CACHE: "weakref.WeakKeyDictionary[object, dict]" = weakref.WeakKeyDictionary()


def _slice_holders(state: ClusterState) -> dict:
    """HAMi mode: the pod shown on each card that vGPU slices share (``hami_metrics.slice_holders``)."""
    if state.mode != SchedulerMode.HAMI:
        return {}
    from gpupoc.sim.hami_metrics import slice_holders

    return slice_holders(state)


def _as_shown(gpu: Gpu, holders: dict) -> Gpu:
    """The card as the exporter shows it: a card held only through HAMi slices gets its first slice's pod."""
    if gpu.holder is not None or gpu.uuid not in holders:
        return gpu
    holder, container = holders[gpu.uuid]
    return replace(gpu, holder=holder, container=container)


def render_dcgm(state: ClusterState, now: float | None = None) -> str:
    """Every simulated GPU in dcgm-exporter's text format; also advances the energy counters."""
    integrate_energy(state, now)
    exp = Exposition()
    for name, type_, help_ in DCGM_FIELDS:
        exp.family(name, type_, help_)
    label_cache = _GPU_LABEL_CACHE.setdefault(state.store, {})
    holders = _slice_holders(state)
    for node in sorted(state.inventory.gpus):
        for card in state.inventory.gpus[node]:
            if card.replica:  # time-slicing: one series per card (the exporter sees the card, not its replicas)
                continue
            g = _as_shown(card, holders)
            r = read_gpu(state, g)
            hit = label_cache.get(g.uuid)
            if hit is None or hit[0] != (g.holder, g.container):
                base, pod = label_str(_gpu_labels(g)), label_str(_pod_labels(g))
                hit = ((g.holder, g.container), base, pod)
                label_cache[g.uuid] = hit
            _, base, pod = hit
            labels = f"{base},{pod}" if pod else base
            u = r.util / 100.0
            exp.add("DCGM_FI_DEV_GPU_TEMP", labels, r.temp_c)
            exp.add("DCGM_FI_DEV_POWER_USAGE", labels, r.power_w)
            exp.add("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", labels, int(g.energy_mj))
            exp.add("DCGM_FI_DEV_GPU_UTIL", labels, round(r.util))
            exp.add("DCGM_FI_DEV_MEM_COPY_UTIL", labels, round(r.util * 0.35))
            if g.xid:
                xid = label_str([("err_code", str(g.xid)), ("err_msg", XID_MESSAGES.get(g.xid, "Unknown Error"))])
                xid_labels = f"{base},{xid},{pod}" if pod else f"{base},{xid}"
            else:
                xid_labels = labels
            exp.add("DCGM_FI_DEV_XID_ERRORS", xid_labels, g.xid)
            exp.add("DCGM_FI_DEV_FB_FREE", labels, r.mem_free_mib)
            exp.add("DCGM_FI_DEV_FB_USED", labels, r.mem_used_mib)
            exp.add("DCGM_FI_DEV_FB_RESERVED", labels, r.mem_reserved_mib)
            exp.add("DCGM_FI_PROF_GR_ENGINE_ACTIVE", labels, round(u * 0.98, 6))
            exp.add("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", labels, round(u * 0.55, 6))
            exp.add("DCGM_FI_PROF_DRAM_ACTIVE", labels, round(u * 0.40, 6))
    if state.mode == SchedulerMode.HAMI:  # HAMi's scheduler and vGPU monitor, scraped alongside
        from gpupoc.sim.hami_metrics import render_hami

        return exp.render() + render_hami(state)
    return exp.render()
