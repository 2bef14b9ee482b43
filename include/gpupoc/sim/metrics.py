"""Prometheus text exposition of the simulated cluster, as NVIDIA dcgm-exporter and kube-state-metrics write it.

``render_dcgm`` serves ``/metrics`` (one series per simulated GPU and field, labels in the exporter's order,
``container``/``namespace``/``pod`` for allocated GPUs as with ``--kubernetes``); ``render_kube_state`` serves
``/metrics/kube-state`` (the kube-state-metrics series that standard alert rules and the collectors use).
"""

from __future__ import annotations

import re
import time
import weakref
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from gpupoc.sim import clock
from gpupoc.sim.cluster import GPU, ClusterState
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


# -- text format helpers ---------------------------------------------------------------------------

def fmt_value(v: float) -> str:
    """A sample value as Prometheus prints it: integers without a fraction, floats shortest round-trip."""
    f = float(v)
    if f.is_integer() and abs(f) < 1e15:
        return str(int(f))
    return repr(f)


def _escape(value: str) -> str:
    value = str(value)
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    return value


def label_str(pairs: Iterable[tuple[str, str]]) -> str:
    """``a="1",b="2"`` (the inside of the braces), values escaped."""
    return ",".join(f'{k}="{_escape(v)}"' for k, v in pairs)


class Exposition:
    """Collects metric families in order and renders the text format (HELP, TYPE, samples)."""

    def __init__(self) -> None:
        self._families: dict[str, tuple[str, str, list[str]]] = {}

    def family(self, name: str, type_: str, help_: str) -> None:
        self._families.setdefault(name, (type_, help_, []))

    def add(self, name: str, labels: Iterable[tuple[str, str]] | str, value: float) -> None:
        """One sample; ``labels`` as pairs or as a ready ``label_str``."""
        inner = labels if isinstance(labels, str) else label_str(labels)
        self._families[name][2].append(f"{name}{{{inner}}} {fmt_value(value)}")

    def extend(self, name: str, lines: list[str]) -> None:
        self._families[name][2].extend(lines)

    def render(self) -> str:
        out: list[str] = []
        for name, (type_, help_, samples) in self._families.items():
            out.append(f"# HELP {name} {help_}")
            out.append(f"# TYPE {name} {type_}")
            out.extend(samples)
        return "\n".join(out) + "\n"


class _Sink:
    """Sample lines of one object by family (cached between scrapes while the object is unchanged)."""

    def __init__(self) -> None:
        self.lines: dict[str, list[str]] = {}

    def add(self, name: str, labels: str, value: float) -> None:
        self.lines.setdefault(name, []).append(f"{name}{{{labels}}} {fmt_value(value)}")


# Store -> {(namespace, pod): ((uid, resourceVersion, host ip), sink)}: unchanged pods are not re-rendered.
_POD_CACHE: "weakref.WeakKeyDictionary[object, dict]" = weakref.WeakKeyDictionary()


def sanitize_label_name(name: str) -> str:
    """kube-state-metrics' label-name conversion: ``gpupoc.io/tenant`` -> ``gpupoc_io_tenant``."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


_QUANTITY_SUFFIX = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
}


def parse_quantity(q: str | int | float) -> float:
    """A Kubernetes quantity (``"8"``, ``"500m"``, ``"2048Gi"``, ``"1e3"``) as a number."""
    if isinstance(q, (int, float)):
        return float(q)
    s = str(q).strip()
    m = re.fullmatch(r"([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)", s)
    if not m or (m.group(2) and m.group(2) not in _QUANTITY_SUFFIX):
        raise ValueError(f"quantity {q!r}: not a Kubernetes quantity (e.g. '8', '500m', '16Gi')")
    return float(m.group(1)) * _QUANTITY_SUFFIX.get(m.group(2), 1)


@lru_cache(maxsize=65536)
def _parse_ts(value: str) -> float:
    return clock.parse(value).timestamp()


def _ts(value: str | None) -> float | None:
    return _parse_ts(value) if value else None


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
    for gpus in inv.gpus.values():
        for g in gpus:
            g.energy_mj += read_gpu(state, g).power_w * dt * 1000.0


def _gpu_labels(gpu: Gpu) -> list[tuple[str, str]]:
    return [("gpu", str(gpu.index)), ("UUID", gpu.uuid), ("pci_bus_id", gpu.pci_bus_id),
            ("device", f"nvidia{gpu.index}"), ("modelName", gpu.model_name), ("Hostname", gpu.node)]


def _pod_labels(gpu: Gpu) -> list[tuple[str, str]]:
    if gpu.holder is None:
        return []
    ns, pod = gpu.holder
    return [("container", gpu.container or ""), ("namespace", ns), ("pod", pod)]


# Store -> {GPU uuid: ((holder, container), GPU labels, pod labels)}
_GPU_LABEL_CACHE: "weakref.WeakKeyDictionary[object, dict]" = weakref.WeakKeyDictionary()


def render_dcgm(state: ClusterState, now: float | None = None) -> str:
    """Every simulated GPU in dcgm-exporter's text format; also advances the energy counters."""
    integrate_energy(state, now)
    exp = Exposition()
    for name, type_, help_ in DCGM_FIELDS:
        exp.family(name, type_, help_)
    label_cache = _GPU_LABEL_CACHE.setdefault(state.store, {})
    for node in sorted(state.inventory.gpus):
        for g in state.inventory.gpus[node]:
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
    return exp.render()


# -- kube-state-metrics ------------------------------------------------------------------------------

PHASES = ("Pending", "Succeeded", "Failed", "Unknown", "Running")
# Labels exported as kube_pod_labels / kube_node_labels (kube-state-metrics --metric-labels-allowlist).
POD_LABEL_ALLOWLIST = ("gpupoc.io/tenant", "gpupoc.io/task-type", "gpupoc.io/workload", "gpupoc.io/run-id",
                       "gpupoc.io/test-class", "gpupoc.io/pool", "kueue.x-k8s.io/queue-name", "app")
NODE_LABEL_ALLOWLIST = ("gpupoc.io/pool", "nvidia.com/gpu.product", "node.kubernetes.io/instance-type")
_NODE_RESOURCES = {  # resource -> (label value, unit)
    "cpu": ("cpu", "core"), "memory": ("memory", "byte"), "pods": ("pods", "integer"),
    GPU: ("nvidia_com_gpu", "integer"),
}

KSM_FAMILIES = [
    ("kube_pod_info", "gauge", "[STABLE] Information about pod."),
    ("kube_pod_labels", "gauge", "[STABLE] Kubernetes labels converted to Prometheus labels."),
    ("kube_pod_created", "gauge", "[STABLE] Unix creation timestamp"),
    ("kube_pod_start_time", "gauge", "[STABLE] Start time in unix timestamp for a pod."),
    ("kube_pod_completion_time", "gauge", "[STABLE] Completion time in unix timestamp for a pod."),
    ("kube_pod_status_scheduled_time", "gauge", "[STABLE] Unix timestamp when pod moved into scheduled status"),
    ("kube_pod_status_phase", "gauge", "[STABLE] The pods current phase."),
    ("kube_pod_status_reason", "gauge", "The pod status reasons"),
    ("kube_pod_container_status_waiting_reason", "gauge",
     "[STABLE] Describes the reason the container is currently in waiting state."),
    ("kube_pod_container_status_terminated_reason", "gauge",
     "Describes the reason the container is currently in terminated state."),
    ("kube_pod_container_status_last_terminated_reason", "gauge",
     "Describes the last reason the container was in terminated state."),
    ("kube_pod_container_status_restarts_total", "counter",
     "[STABLE] The number of container restarts per container."),
    ("kube_pod_container_resource_requests", "gauge",
     "The number of requested request resource by a container. It is recommended to use the "
     "kube_pod_resource_requests metric exposed by kube-scheduler instead, as it is more precise."),
    ("kube_node_labels", "gauge", "[STABLE] Kubernetes labels converted to Prometheus labels."),
    ("kube_node_spec_unschedulable", "gauge", "[STABLE] Whether a node can schedule new pods."),
    ("kube_node_spec_taint", "gauge", "[STABLE] The taint of a cluster node."),
    ("kube_node_status_condition", "gauge", "[STABLE] The condition of a cluster node."),
    ("kube_node_status_capacity", "gauge", "[STABLE] The capacity for different resources of a node."),
    ("kube_node_status_allocatable", "gauge",
     "[STABLE] The allocatable for different resources of a node that are available for scheduling."),
    ("kube_resourcequota", "gauge", "[STABLE] Information about resource quota."),
]


def render_kube_state(state: ClusterState) -> str:
    """Pods, nodes and resource quotas as kube-state-metrics series."""
    exp = Exposition()
    for name, type_, help_ in KSM_FAMILIES:
        exp.family(name, type_, help_)
    nodes = state.store.list("nodes")
    host_ips = {n["metadata"]["name"]: _internal_ip(n) for n in nodes}
    cache = _POD_CACHE.setdefault(state.store, {})
    fresh: dict = {}
    for pod in state.store.list("pods"):
        md = pod["metadata"]
        key = (md.get("namespace", ""), md["name"])
        stamp = (md.get("uid"), md.get("resourceVersion"), host_ips.get((pod.get("spec") or {}).get("nodeName") or ""))
        hit = cache.get(key)
        if hit is None or hit[0] != stamp:
            sink = _Sink()
            _pod_series(sink, pod, host_ips)
            hit = (stamp, sink)
        fresh[key] = hit
        for family, lines in hit[1].lines.items():
            exp.extend(family, lines)
    _POD_CACHE[state.store] = fresh
    for node in nodes:
        _node_series(exp, node)
    for rq in state.store.list("resourcequotas"):
        md = rq["metadata"]
        status = rq.get("status") or {}
        for type_ in ("hard", "used"):
            for resource, q in sorted((status.get(type_) or {}).items()):
                exp.add("kube_resourcequota", [("namespace", md.get("namespace", "")), ("resourcequota", md["name"]),
                                               ("resource", resource), ("type", type_)], parse_quantity(q))
    return exp.render()


def _internal_ip(node: dict) -> str:
    for a in (node.get("status") or {}).get("addresses") or []:
        if a.get("type") == "InternalIP":
            return a.get("address", "")
    return ""


def _pod_series(exp: _Sink, pod: dict, host_ips: dict[str, str]) -> None:
    md, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    ident = label_str([("namespace", md.get("namespace", "")), ("pod", md["name"]), ("uid", md.get("uid", ""))])
    node = spec.get("nodeName") or ""
    owner = next(iter(md.get("ownerReferences") or []), {})
    exp.add("kube_pod_info", ident + "," + label_str([
        ("host_ip", status.get("hostIP") or host_ips.get(node, "")), ("pod_ip", status.get("podIP") or ""),
        ("node", node), ("created_by_kind", owner.get("kind", "")), ("created_by_name", owner.get("name", "")),
        ("priority_class", spec.get("priorityClassName") or ""),
        ("host_network", str(bool(spec.get("hostNetwork"))).lower())]), 1)
    labels = md.get("labels") or {}
    allowed = [(f"label_{sanitize_label_name(k)}", labels[k]) for k in POD_LABEL_ALLOWLIST if k in labels]
    exp.add("kube_pod_labels", ident + ("," + label_str(allowed) if allowed else ""), 1)
    for family, value in (("kube_pod_created", _ts(md.get("creationTimestamp"))),
                          ("kube_pod_start_time", _ts(status.get("startTime"))),
                          ("kube_pod_completion_time", _completion_time(status)),
                          ("kube_pod_status_scheduled_time", _scheduled_time(status))):
        if value is not None:
            exp.add(family, ident, value)
    phase = status.get("phase") or "Pending"
    for p in PHASES:
        exp.add("kube_pod_status_phase", f'{ident},phase="{p}"', 1 if p == phase else 0)
    if status.get("reason"):
        exp.add("kube_pod_status_reason", ident + "," + label_str([("reason", status["reason"])]), 1)
    statuses = {c.get("name"): c for c in status.get("containerStatuses") or []}
    for c in spec.get("containers") or []:
        cid = ident + "," + label_str([("container", c["name"])])
        cs = statuses.get(c["name"]) or {}
        st = cs.get("state") or {}
        last = (cs.get("lastState") or {}).get("terminated") or {}
        for family, reason in (("kube_pod_container_status_waiting_reason", (st.get("waiting") or {}).get("reason")),
                               ("kube_pod_container_status_terminated_reason",
                                (st.get("terminated") or {}).get("reason")),
                               ("kube_pod_container_status_last_terminated_reason", last.get("reason"))):
            if reason:
                exp.add(family, cid + "," + label_str([("reason", reason)]), 1)
        if cs:
            exp.add("kube_pod_container_status_restarts_total", cid, cs.get("restartCount", 0))
        res = c.get("resources") or {}
        gpus = (res.get("requests") or {}).get(GPU, (res.get("limits") or {}).get(GPU))
        if gpus is not None:
            exp.add("kube_pod_container_resource_requests", cid + "," + label_str([
                ("node", node), ("resource", "nvidia_com_gpu"), ("unit", "integer")]), parse_quantity(gpus))


def _completion_time(status: dict) -> float | None:
    done = [((cs.get("state") or {}).get("terminated") or {}).get("finishedAt")
            for cs in status.get("containerStatuses") or []]
    done = [d for d in done if d]
    return max(_ts(d) for d in done) if done else None


def _scheduled_time(status: dict) -> float | None:
    for c in status.get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "True":
            return _ts(c.get("lastTransitionTime"))
    return None


def _node_series(exp: Exposition, node: dict) -> None:
    md, spec, status = node["metadata"], node.get("spec") or {}, node.get("status") or {}
    name = [("node", md["name"])]
    labels = md.get("labels") or {}
    exp.add("kube_node_labels", name + [(f"label_{sanitize_label_name(k)}", labels[k])
                                        for k in NODE_LABEL_ALLOWLIST if k in labels], 1)
    exp.add("kube_node_spec_unschedulable", name, 1 if spec.get("unschedulable") else 0)
    for t in spec.get("taints") or []:
        exp.add("kube_node_spec_taint", name + [("key", t.get("key", "")), ("value", t.get("value", "")),
                                                 ("effect", t.get("effect", ""))], 1)
    for cond in status.get("conditions") or []:
        current = str(cond.get("status", "Unknown")).lower()
        for s in ("true", "false", "unknown"):
            exp.add("kube_node_status_condition", name + [("condition", cond["type"]), ("status", s)],
                    1 if s == current else 0)
    for family, key in (("kube_node_status_capacity", "capacity"), ("kube_node_status_allocatable", "allocatable")):
        for resource, q in sorted((status.get(key) or {}).items()):
            if resource in _NODE_RESOURCES:
                label, unit = _NODE_RESOURCES[resource]
                exp.add(family, name + [("resource", label), ("unit", unit)], parse_quantity(q))
