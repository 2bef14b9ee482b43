"""GPUs as NVIDIA dcgm-exporter exposes them, shared by the simulated cluster (``sim/metrics.py``) and the
real-cluster exporter (``controlplane/exporter.py``): one series per GPU and field, labels in the exporter's
order, ``container``/``namespace``/``pod`` of the holder pod as with ``--kubernetes``. A held GPU's utilization
and memory are its pod's ``Telemetry``; a virtual workload's come from its ``WORKLOAD_GPU_*`` variables
(``virtual_telemetry``), so both clusters report the same figures for the same workload."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from gpupoc.kube.exposition import Exposition, label_str

PodKey = tuple[str, str]  # (namespace, pod name)

# Framebuffer the driver keeps for itself (H100 80GB HBM3: 555 of 81559 MiB).
RESERVED_FRACTION = 0.0068
SILENT_POD_MEM_MIB = 4.0  # an allocated GPU whose pod reports nothing still holds a small context
IDLE_TEMP_C = 31.0
TEMP_PER_UTIL_C = 0.42  # 100 % -> ~73 C
UTIL_ENV, MEM_ENV = "WORKLOAD_GPU_UTIL", "WORKLOAD_GPU_MEM_MIB"  # the pod builder's (podspec/build.py)

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


@dataclass
class Gpu:
    """One GPU. ``holder`` is the pod it is allocated to (None when free); ``memory_mib`` 0: size unknown."""

    node: str
    index: int
    uuid: str
    pci_bus_id: str
    model_name: str
    memory_mib: int
    max_power_w: int
    idle_power_w: int
    pool: str
    holder: PodKey | None = None
    container: str | None = None
    energy_mj: float = 0.0
    xid: int = 0  # last XID error (0: none)
    replica: int = 0  # time-slicing: which replica of the card (the same UUID) this is
    card: int = -1  # the physical card's index on the node (-1: this device's own index)


@dataclass
class Telemetry:
    """What a running pod's GPUs are doing now: utilization (%) and framebuffer memory used (MiB)."""

    util: float = 0.0
    mem_mib: float = 0.0


@dataclass(frozen=True)
class GpuReading:
    """What one GPU reports at one moment."""

    util: float
    mem_used_mib: float
    mem_free_mib: float
    mem_reserved_mib: float
    power_w: float
    temp_c: float


def pci_bus_id(card: int) -> str:
    """The bus id of a node's ``card``-th GPU (``00000000:17:00.0``, then every 0x10)."""
    return f"00000000:{0x17 + card * 0x10:02X}:00.0"


def virtual_telemetry(env: Mapping[str, str]) -> Telemetry:
    """A virtual workload's GPU use from its container env: ``WORKLOAD_GPU_UTIL`` (%, clamped to 0..100) and
    ``WORKLOAD_GPU_MEM_MIB`` (at least 0); an absent or unreadable value is 0."""
    def num(name: str) -> float:
        try:
            return float(env.get(name, 0.0))
        except (TypeError, ValueError):
            return 0.0

    return Telemetry(util=min(100.0, max(0.0, num(UTIL_ENV))), mem_mib=max(0.0, num(MEM_ENV)))


def read_gpu(gpu: Gpu, tel: Telemetry | None) -> GpuReading:
    """The GPU's reading from its holder pod's telemetry ``tel`` (the same on each of the pod's GPUs); a held GPU
    whose pod reports nothing holds a small context."""
    reserved = float(round(gpu.memory_mib * RESERVED_FRACTION))
    usable = gpu.memory_mib - reserved
    util, mem = 0.0, 0.0
    if gpu.holder is not None:
        if tel is None:
            mem = SILENT_POD_MEM_MIB
        else:
            util = min(max(float(tel.util), 0.0), 100.0)
            mem = max(float(tel.mem_mib), 0.0)
            mem = min(mem, usable) if gpu.memory_mib > 0 else mem
    power = gpu.idle_power_w + util / 100.0 * (gpu.max_power_w - gpu.idle_power_w)
    temp = IDLE_TEMP_C + gpu.index % 3 + TEMP_PER_UTIL_C * util
    free = float(round(usable - mem)) if gpu.memory_mib > 0 else 0.0
    return GpuReading(util, float(round(mem)), free, reserved, round(power, 3), round(temp))


def add_energy(cards: Iterable[Gpu], telemetry: Mapping[PodKey, Telemetry], seconds: float) -> None:
    """Add each card's current power times ``seconds`` to its energy counter (mJ); a time-slicing replica is the
    same card and adds nothing."""
    if seconds <= 0:
        return
    for g in cards:
        if not g.replica:
            g.energy_mj += read_gpu(g, _tel(g, telemetry)).power_w * seconds * 1000.0


def _tel(gpu: Gpu, telemetry: Mapping[PodKey, Telemetry]) -> Telemetry | None:
    return telemetry.get(gpu.holder) if gpu.holder is not None else None


def gpu_labels(gpu: Gpu) -> list[tuple[str, str]]:
    index = gpu.card if gpu.card >= 0 else gpu.index  # a MIG instance or a replica: its card's index
    return [("gpu", str(index)), ("UUID", gpu.uuid), ("pci_bus_id", gpu.pci_bus_id),
            ("device", f"nvidia{index}"), ("modelName", gpu.model_name), ("Hostname", gpu.node)]


def pod_labels(gpu: Gpu) -> list[tuple[str, str]]:
    if gpu.holder is None:
        return []
    ns, pod = gpu.holder
    return [("container", gpu.container or ""), ("namespace", ns), ("pod", pod)]


def dcgm_exposition(cards: Iterable[Gpu], telemetry: Mapping[PodKey, Telemetry],
                    label_cache: dict | None = None) -> Exposition:
    """The cards' series (replicas of a time-sliced card skipped: the exporter sees the card). ``label_cache``
    ({uuid: ((holder, container), GPU labels, pod labels)}, kept by the caller) spares re-escaping labels."""
    exp = Exposition()
    for name, type_, help_ in DCGM_FIELDS:
        exp.family(name, type_, help_)
    cache = label_cache if label_cache is not None else {}
    for g in cards:
        if g.replica:
            continue
        hit = cache.get(g.uuid)
        if hit is None or hit[0] != (g.holder, g.container):
            hit = ((g.holder, g.container), label_str(gpu_labels(g)), label_str(pod_labels(g)))
            cache[g.uuid] = hit
        _, base, pod = hit
        _add_card(exp, g, read_gpu(g, _tel(g, telemetry)), base, pod)
    return exp


def _add_card(exp: Exposition, g: Gpu, r: GpuReading, base: str, pod: str) -> None:
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
