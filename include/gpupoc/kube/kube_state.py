"""Pods, nodes and ResourceQuotas as kube-state-metrics exposes them: the series that standard alert rules and the
collectors use. Pure over the objects' JSON, so the simulated cluster (``/metrics/kube-state``) and the
real-cluster exporter (``controlplane/exporter.py``) serve the same series for the same objects."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from gpupoc.common.timefmt import parse_time
from gpupoc.kube.exposition import Exposition, Sink, label_str
from gpupoc.kube.resources import GPU

# {(namespace, pod): ((uid, resourceVersion, host ip), sink)}: a caller's cache, so unchanged pods are not re-rendered
PodCache = dict


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
    return parse_time(value).timestamp()


def _ts(value: str | None) -> float | None:
    return _parse_ts(value) if value else None


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


def render_kube_state(pods: Iterable[dict], nodes: list[dict], quotas: Iterable[dict],
                      cache: PodCache | None = None) -> str:
    """Pods, nodes and resource quotas as kube-state-metrics series. ``cache`` (kept by the caller between
    scrapes) is updated in place to the pods of this call."""
    exp = Exposition()
    for name, type_, help_ in KSM_FAMILIES:
        exp.family(name, type_, help_)
    host_ips = {n["metadata"]["name"]: _internal_ip(n) for n in nodes}
    old = cache if cache is not None else {}
    fresh: PodCache = {}
    for pod in pods:
        md = pod["metadata"]
        key = (md.get("namespace", ""), md["name"])
        stamp = (md.get("uid"), md.get("resourceVersion"), host_ips.get((pod.get("spec") or {}).get("nodeName") or ""))
        hit = old.get(key)
        if hit is None or hit[0] != stamp:
            sink = Sink()
            _pod_series(sink, pod, host_ips)
            hit = (stamp, sink)
        fresh[key] = hit
        for family, lines in hit[1].lines.items():
            exp.extend(family, lines)
    if cache is not None:
        cache.clear()
        cache.update(fresh)
    for node in nodes:
        _node_series(exp, node)
    for rq in quotas:
        _quota_series(exp, rq)
    return exp.render()


def _quota_series(exp: Exposition, rq: dict) -> None:
    md = rq["metadata"]
    status = rq.get("status") or {}
    for type_ in ("hard", "used"):
        for resource, q in sorted((status.get(type_) or {}).items()):
            exp.add("kube_resourcequota", [("namespace", md.get("namespace", "")), ("resourcequota", md["name"]),
                                           ("resource", resource), ("type", type_)], parse_quantity(q))


def _internal_ip(node: dict) -> str:
    for a in (node.get("status") or {}).get("addresses") or []:
        if a.get("type") == "InternalIP":
            return a.get("address", "")
    return ""


def _pod_series(exp: Sink, pod: dict, host_ips: dict[str, str]) -> None:
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
