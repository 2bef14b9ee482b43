"""HAMi's metrics under its current names (v2.9 and later), served with dcgm-exporter's on ``/metrics`` in the
``hami`` mode.

- The scheduler's (Project-HAMi/HAMi ``cmd/scheduler/metrics.go``), per card: ``hami_gpu_memory_limit_bytes``,
  ``hami_gpu_memory_allocated_bytes`` (labels add ``device_cores``), ``hami_gpu_core_limit_ratio``,
  ``hami_gpu_core_allocated_ratio``, ``hami_gpu_shared_count``; labels ``node, device_uuid, device_index,
  device_type``.
- The vGPU monitor's (``cmd/vGPUmonitor/metrics.go``): per container ``hami_vgpu_memory_used_bytes``,
  ``hami_vgpu_memory_limit_bytes``, ``hami_container_device_utilization_ratio`` (labels ``namespace, pod,
  container, vdevice_index, device_uuid``) and per card ``hami_host_gpu_memory_used_bytes`` (``device_index,
  device_uuid, device_type``).

Memory used is what the card's driver ledger books for the pod's processes (``workload.cuda``), as the monitor
reads HAMi-core's shared region, else what the pod's workload claims (a virtual pod books nothing); utilization is
what the pod's workload claims.
"""

from __future__ import annotations

from gpupoc.kube import hami as HAMI
from gpupoc.sim import hami_devices as H
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers.gpu_driver import ledger_dir
from gpupoc.sim.controllers.hami import hami_for
from gpupoc.kube.exposition import Exposition
from gpupoc.workload.cuda import MIB, read_ledger

FAMILIES = [
    ("hami_gpu_memory_limit_bytes", "Device memory limit for a certain GPU"),
    ("hami_gpu_memory_allocated_bytes", "Device memory allocated for a certain GPU"),
    ("hami_gpu_core_limit_ratio", "Device core limit for a certain GPU"),
    ("hami_gpu_core_allocated_ratio", "Device core allocated for a certain GPU"),
    ("hami_gpu_shared_count", "Number of containers sharing this GPU"),
    ("hami_vgpu_memory_allocated_bytes", "vGPU memory allocated from a container"),
    ("hami_vgpu_core_allocated_ratio", "vGPU core allocated from a container"),
    ("hami_host_gpu_memory_used_bytes", "GPU device memory usage in bytes"),
    ("hami_vgpu_memory_used_bytes", "vGPU device memory usage in bytes"),
    ("hami_vgpu_memory_limit_bytes", "vGPU device memory limit in bytes"),
    ("hami_container_device_utilization_ratio", "Container device SM utilization ratio"),
]


def booked(state: ClusterState) -> dict[str, dict[str, int]]:
    """card UUID -> owner ("ns/pod") -> MiB, from the driver ledgers."""
    out: dict[str, dict[str, int]] = {}
    directory = ledger_dir(state)
    for path in sorted(directory.glob("GPU-*.json")) if directory.is_dir() else []:
        per: dict[str, int] = {}
        for entry in read_ledger(path).values():
            per[entry.get("owner", "")] = per.get(entry.get("owner", ""), 0) + int(entry.get("mib", 0))
        out[path.stem] = per
    return out


def slice_holders(state: ClusterState) -> dict[str, tuple[tuple[str, str], str]]:
    """card UUID -> (pod key, container) of the first active pod holding a slice of it (by name), which
    dcgm-exporter's pod mapping shows on the card's series."""
    out: dict[str, tuple[tuple[str, str], str]] = {}
    for pod in state.store.list("pods"):
        meta = pod["metadata"]
        if not pod.get("spec", {}).get("nodeName") or pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        devices = H.decode_pod_devices((meta.get("annotations") or {}).get(HAMI.ALLOCATED))
        for req, grants in zip(H.requests_of(pod), devices):
            for g in grants:
                out.setdefault(g.uuid, ((meta.get("namespace", ""), meta["name"]), req.container))
    return out


def render_hami(state: ClusterState) -> str:
    exp = Exposition()
    for name, help_ in FAMILIES:
        exp.family(name, "gauge", help_)
    books = booked(state)
    for node, cards in sorted(hami_for(state).usage().items()):
        for c in cards:
            card = [("node", node), ("device_uuid", c.uuid), ("device_index", str(c.index)), ("device_type", c.type)]
            exp.add("hami_gpu_memory_limit_bytes", card, c.total_mem * MIB)
            exp.add("hami_gpu_memory_allocated_bytes", card[:3] + [("device_cores", str(c.used_cores)), card[3]],
                    c.used_mem * MIB)
            exp.add("hami_gpu_core_limit_ratio", card, c.total_core)
            exp.add("hami_gpu_core_allocated_ratio", card, c.used_cores)
            exp.add("hami_gpu_shared_count", card, c.used)
            host = [("device_index", str(c.index)), ("device_uuid", c.uuid), ("device_type", c.type)]
            exp.add("hami_host_gpu_memory_used_bytes", host, sum(books.get(c.uuid, {}).values()) * MIB)
    _allocated(state, exp)
    _containers(state, exp, books)
    return exp.render()


def _allocated(state: ClusterState, exp: Exposition) -> None:
    """The scheduler's per-container grants (``GetScheduledPods``): the pods it counts, as ``usage`` does."""
    hami = hami_for(state)
    for pod in state.store.list("pods"):
        if not hami.holds_slice(pod):
            continue
        meta = pod["metadata"]
        for index, grants in enumerate(H.decode_pod_devices(meta["annotations"].get(HAMI.ALLOCATED))):
            for g in grants:
                labels = [("namespace", meta.get("namespace", "")), ("node", pod["spec"]["nodeName"]),
                          ("pod", meta["name"]), ("container_index", str(index)), ("device_uuid", g.uuid)]
                exp.add("hami_vgpu_memory_allocated_bytes", labels, g.mem_mib * MIB)
                exp.add("hami_vgpu_core_allocated_ratio", labels, g.cores)


def _containers(state: ClusterState, exp: Exposition, books: dict[str, dict[str, int]]) -> None:
    for pod in state.store.list("pods"):
        meta = pod["metadata"]
        if not pod.get("spec", {}).get("nodeName") or pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        devices = H.decode_pod_devices((meta.get("annotations") or {}).get(HAMI.ALLOCATED))
        owner = f"{meta.get('namespace', '')}/{meta['name']}"
        tel = state.inventory.telemetry.get((meta.get("namespace", ""), meta["name"]))
        for req, grants in zip(H.requests_of(pod), devices):
            for i, g in enumerate(grants):
                labels = [("namespace", meta.get("namespace", "")), ("pod", meta["name"]),
                          ("container", req.container), ("vdevice_index", str(i)), ("device_uuid", g.uuid)]
                used = books.get(g.uuid, {}).get(owner) or (tel.mem_mib if tel else 0)
                exp.add("hami_vgpu_memory_used_bytes", labels, round(used * MIB))
                exp.add("hami_vgpu_memory_limit_bytes", labels, g.mem_mib * MIB)
                exp.add("hami_container_device_utilization_ratio", labels, round(tel.util) if tel else 0)
