"""Server-side printing: the meta.k8s.io/v1 Table that ``kubectl get`` asks for, with kubectl's columns."""

from __future__ import annotations

from datetime import datetime
from typing import Callable

from gpupoc.common import fastjson
from gpupoc.sim import clock
from gpupoc.sim.service_tables import service_printers

Row = list
Columns = list[tuple[str, str, int, str]]  # (name, type, priority, description)


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery duration.HumanDuration: ``45s``, ``3m12s``, ``5h3m``, ``2d4h`` ..."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def age(ts: str | None, now: datetime | None = None) -> str:
    if not ts:
        return "<unknown>"
    return human_duration(((now or clock.now()) - clock.parse(ts)).total_seconds())


# -- pods -------------------------------------------------------------------------------------
def pod_status_reason(pod: dict) -> str:
    """The STATUS column of ``kubectl get pods`` (printPod in kubernetes/pkg/printers)."""
    status = pod.get("status") or {}
    meta = pod.get("metadata") or {}
    reason = status.get("reason") or status.get("phase") or "Unknown"
    for c in status.get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    initializing = False
    inits = status.get("initContainerStatuses") or []
    for i, cs in enumerate(inits):
        st = cs.get("state") or {}
        term, wait = st.get("terminated"), st.get("waiting")
        if term and term.get("exitCode") == 0:
            continue
        if term:
            reason = "Init:" + (term.get("reason") or f"ExitCode:{term.get('exitCode')}")
        elif wait and wait.get("reason") and wait["reason"] != "PodInitializing":
            reason = "Init:" + wait["reason"]
        else:
            reason = f"Init:{i}/{len(inits)}"
        initializing = True
        break
    if not initializing:
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            st = cs.get("state") or {}
            wait, term = st.get("waiting"), st.get("terminated")
            if wait and wait.get("reason"):
                reason = wait["reason"]
            elif term and term.get("reason"):
                reason = term["reason"]
            elif term:
                reason = f"Signal:{term['signal']}" if term.get("signal") else f"ExitCode:{term.get('exitCode')}"
            elif st.get("running") and cs.get("ready"):
                has_running = True
        if reason == "Completed" and has_running:
            reason = "Running"
    if meta.get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return reason


def _pod_row(pod: dict) -> Row:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    statuses = status.get("containerStatuses") or []
    total = len(spec.get("containers") or [])
    ready = sum(1 for cs in statuses if cs.get("ready"))
    restarts = sum(int(cs.get("restartCount") or 0) for cs in statuses)
    last_restart = None
    for cs in statuses:
        fin = ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt")
        if fin and (last_restart is None or fin > last_restart):
            last_restart = fin
    restarts_cell = str(restarts) if not last_restart else f"{restarts} ({age(last_restart)} ago)"
    gates = spec.get("readinessGates") or []
    return [
        pod["metadata"]["name"], f"{ready}/{total}", pod_status_reason(pod), restarts_cell,
        age(pod["metadata"].get("creationTimestamp")), status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>",
        f"0/{len(gates)}" if gates else "<none>",
    ]


POD_COLUMNS: Columns = [
    ("Name", "string", 0, "Name must be unique within a namespace."),
    ("Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."),
    ("Status", "string", 0, "The aggregate status of the containers in this pod."),
    ("Restarts", "string", 0, "The number of times the containers in this pod have been restarted."),
    ("Age", "string", 0, "CreationTimestamp is a timestamp representing the server time when this object was created."),
    ("IP", "string", 1, "IP address allocated to the pod."),
    ("Node", "string", 1, "NodeName is a request to schedule this pod onto a specific node."),
    ("Nominated Node", "string", 1, "nominatedNodeName is set only when this pod preempts other pods on the node."),
    ("Readiness Gates", "string", 1, "If specified, all readiness gates will be evaluated for pod readiness."),
]


# -- nodes ------------------------------------------------------------------------------------
def node_status(node: dict) -> str:
    conds = {c.get("type"): c for c in (node.get("status") or {}).get("conditions") or []}
    parts = []
    if "Ready" in conds:
        parts.append("Ready" if conds["Ready"].get("status") == "True" else "NotReady")
    if not parts:
        parts.append("Unknown")
    if (node.get("spec") or {}).get("unschedulable"):
        parts.append("SchedulingDisabled")
    return ",".join(parts)


def _node_row(node: dict) -> Row:
    labels = node["metadata"].get("labels") or {}
    roles = sorted({k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/") and "/" in k}
                   | ({labels["kubernetes.io/role"]} if labels.get("kubernetes.io/role") else set()))
    status = node.get("status") or {}
    addrs = {a.get("type"): a.get("address") for a in status.get("addresses") or []}
    info = status.get("nodeInfo") or {}
    return [
        node["metadata"]["name"], node_status(node), ",".join(roles) or "<none>",
        age(node["metadata"].get("creationTimestamp")), info.get("kubeletVersion", ""),
        addrs.get("InternalIP", "<none>"), addrs.get("ExternalIP", "<none>"), info.get("osImage", "<unknown>"),
        info.get("kernelVersion", "<unknown>"), info.get("containerRuntimeVersion", "<unknown>"),
    ]


NODE_COLUMNS: Columns = [
    ("Name", "string", 0, "Name must be unique within a namespace."),
    ("Status", "string", 0, "The status of the node"),
    ("Roles", "string", 0, "The roles of the node"),
    ("Age", "string", 0, "CreationTimestamp is a timestamp representing the server time when this object was created."),
    ("Version", "string", 0, "Kubelet Version reported by the node."),
    ("Internal-IP", "string", 1, "List of internal IPs."),
    ("External-IP", "string", 1, "List of external IPs."),
    ("OS-Image", "string", 1, "OS image reported by the node from /etc/os-release."),
    ("Kernel-Version", "string", 1, "Kernel Version reported by the node."),
    ("Container-Runtime", "string", 1, "Container Runtime Version reported by the node."),
]


# -- events -----------------------------------------------------------------------------------
def _event_row(ev: dict) -> Row:
    inv = ev.get("involvedObject") or {}
    last = ev.get("lastTimestamp") or ev.get("eventTime") or ev["metadata"].get("creationTimestamp")
    first = ev.get("firstTimestamp") or ev.get("eventTime") or last
    count = int(ev.get("count") or 1)
    last_seen = age(last)
    if count > 1:
        last_seen = f"{last_seen} (x{count} over {age(first)})"
    src = ev.get("source") or {}
    source = src.get("component") or ev.get("reportingComponent") or ""
    if src.get("host"):
        source += f", {src['host']}"
    return [
        last_seen, ev.get("type", ""), ev.get("reason", ""),
        f"{str(inv.get('kind', '')).lower()}/{inv.get('name', '')}", inv.get("fieldPath", ""), source,
        ev.get("message", ""), age(first), count, ev["metadata"]["name"],
    ]


EVENT_COLUMNS: Columns = [
    ("Last Seen", "string", 0, "Time when this Event was last observed."),
    ("Type", "string", 0, "Type of this event (Normal, Warning), new types could be added in the future."),
    ("Reason", "string", 0, "This should be a short, machine understandable string."),
    ("Object", "string", 0, "The object this Event is about."),
    ("Subobject", "string", 1, "The subobject this Event is about."),
    ("Source", "string", 1, "The component reporting this event."),
    ("Message", "string", 0, "A human-readable description of the status of this operation."),
    ("First Seen", "string", 1, "The time at which the event was first recorded."),
    ("Count", "integer", 1, "The number of times this event has occurred."),
    ("Name", "string", 1, "Name must be unique within a namespace."),
]


# -- resourcequotas ---------------------------------------------------------------------------
def _quota_row(rq: dict) -> Row:
    hard = (rq.get("spec") or {}).get("hard") or {}
    used = (rq.get("status") or {}).get("used") or {}
    req, lim = [], []
    for res in sorted(hard):
        cell = f"{res}: {used.get(res, '0')}/{hard[res]}"
        (lim if res.startswith("limits.") else req).append(cell)
    return [rq["metadata"]["name"], age(rq["metadata"].get("creationTimestamp")), ", ".join(req), ", ".join(lim)]


QUOTA_COLUMNS: Columns = [
    ("Name", "string", 0, "Name must be unique within a namespace."),
    ("Age", "string", 0, "CreationTimestamp is a timestamp representing the server time when this object was created."),
    ("Request", "string", 0, "Request represents a minimum amount of cpu/memory that a container may consume."),
    ("Limit", "string", 0, "Limits control the maximum amount of cpu/memory that a container may use "
                           "independent of contention on the node."),
]


def _ns_row(ns: dict) -> Row:
    meta = ns["metadata"]
    return [meta["name"], (ns.get("status") or {}).get("phase", ""), age(meta.get("creationTimestamp"))]


NS_COLUMNS: Columns = [
    ("Name", "string", 0, "Name must be unique within a namespace."),
    ("Status", "string", 0, "The status of the namespace"),
    ("Age", "string", 0, "CreationTimestamp is a timestamp representing the server time when this object was created."),
]


def _generic_row(obj: dict) -> Row:
    return [obj["metadata"]["name"], age(obj["metadata"].get("creationTimestamp"))]


GENERIC_COLUMNS: Columns = [
    ("Name", "string", 0, "Name must be unique within a namespace."),
    ("Age", "string", 0, "CreationTimestamp is a timestamp representing the server time when this object was created."),
]

def _col(name: str, type_: str = "string", priority: int = 0, description: str = "") -> tuple[str, str, int, str]:
    return (name, type_, priority, description)


_AGE = _col("Age", description="CreationTimestamp is a timestamp representing the server time when this object was "
                                "created.")
_NAME = _col("Name", description="Name must be unique within a namespace.")


def _simple(*cells: Callable[[dict], object]) -> Callable[[dict], Row]:
    def row(obj: dict) -> Row:
        return [obj["metadata"]["name"], *(c(obj) for c in cells), age(obj["metadata"].get("creationTimestamp"))]
    return row


def _simple_cols(*names: tuple[str, str]) -> Columns:
    return [_NAME, *(_col(n, t) for n, t in names), _AGE]


def _status(key: str) -> Callable[[dict], object]:
    return lambda o: (o.get("status") or {}).get(key, 0)


def _wl_condition(type_: str) -> Callable[[dict], object]:
    def get(o: dict) -> str:
        for c in (o.get("status") or {}).get("conditions") or []:
            if c.get("type") == type_:
                return c.get("status", "")
        return ""
    return get


PRINTERS: dict[str, tuple[Columns, Callable[[dict], Row]]] = {
    "priorityclasses": ([_NAME, _col("Value", "integer"), _col("Global-Default", "boolean"), _AGE,
                         _col("PreemptionPolicy")],
                        lambda o: [o["metadata"]["name"], o.get("value", 0), bool(o.get("globalDefault")),
                                   age(o["metadata"].get("creationTimestamp")),
                                   o.get("preemptionPolicy", "PreemptLowerPriority")]),
    "secrets": (_simple_cols(("Type", "string"), ("Data", "string")),
                _simple(lambda o: o.get("type", "Opaque"), lambda o: str(len(o.get("data") or {})))),
    "configmaps": (_simple_cols(("Data", "string")), _simple(lambda o: str(len(o.get("data") or {})))),
    "serviceaccounts": (_simple_cols(("Secrets", "string")), _simple(lambda o: str(len(o.get("secrets") or [])))),
    "clusterqueues": (_simple_cols(("Cohort", "string"), ("Strategy", "string"), ("Pending Workloads", "integer"),
                                   ("Admitted Workloads", "integer")),
                      _simple(lambda o: (o.get("spec") or {}).get("cohort", ""),
                              lambda o: (o.get("spec") or {}).get("queueingStrategy", ""),
                              _status("pendingWorkloads"), _status("admittedWorkloads"))),
    "localqueues": (_simple_cols(("ClusterQueue", "string"), ("Pending Workloads", "integer"),
                                 ("Admitted Workloads", "integer")),
                    _simple(lambda o: (o.get("spec") or {}).get("clusterQueue", ""), _status("pendingWorkloads"),
                            _status("admittedWorkloads"))),
    "workloads": (_simple_cols(("Queue", "string"), ("Reserved in", "string"), ("Admitted", "string"),
                               ("Finished", "string")),
                  _simple(lambda o: (o.get("spec") or {}).get("queueName", ""),
                          lambda o: (((o.get("status") or {}).get("admission") or {}).get("clusterQueue", "")),
                          _wl_condition("Admitted"), _wl_condition("Finished"))),
    "pods": (POD_COLUMNS, _pod_row),
    "nodes": (NODE_COLUMNS, _node_row),
    "events": (EVENT_COLUMNS, _event_row),
    "resourcequotas": (QUOTA_COLUMNS, _quota_row),
    "namespaces": (NS_COLUMNS, _ns_row),
    **service_printers(age),
}


def _spec(key: str, default: object = "") -> Callable[[dict], object]:
    return lambda o: (o.get("spec") or {}).get(key, default)


# CRD printer columns of resources whose plural two projects share, by API group (the CRDs'
# additionalPrinterColumns; a CRD without them prints Name and Age).
GROUP_PRINTERS: dict[tuple[str, str], tuple[Columns, Callable[[dict], Row]]] = {
    ("queues", "scheduling.volcano.sh"): ([_NAME, _col("PARENT", description="The parent queue of this queue")],
                                          lambda o: [o["metadata"]["name"], _spec("parent")(o)]),
    ("podgroups", "scheduling.volcano.sh"): (
        [_NAME, _col("STATUS"), _col("minMember", "integer"), _col("RUNNINGS", "integer"), _col("AGE", "date"),
         _col("QUEUE", priority=1)],
        lambda o: [o["metadata"]["name"], _status("phase")(o) or "", _spec("minMember", 0)(o),
                   _status("running")(o), age(o["metadata"].get("creationTimestamp")), _spec("queue")(o)]),
    ("queues", "scheduling.run.ai"): (
        [_NAME, _col("Priority"), _col("Parent"), _col("Children"), _col("DisplayName")],
        lambda o: [o["metadata"]["name"], str(_spec("priority", "")(o)), _spec("parentQueue")(o),
                   ",".join((o.get("status") or {}).get("childQueues") or []), _spec("displayName")(o)]),
}


def _printer(resource: str, objs: list[dict]) -> tuple[Columns, Callable[[dict], Row]]:
    if objs and resource in ("queues", "podgroups"):
        group = str(objs[0].get("apiVersion", "")).split("/")[0]
        return GROUP_PRINTERS.get((resource, group), (GENERIC_COLUMNS, _generic_row))
    return PRINTERS.get(resource, (GENERIC_COLUMNS, _generic_row))


def partial_metadata(obj: dict) -> dict:
    """``obj`` as a PartialObjectMetadata, its metadata copied (through orjson: a deletecollection of 10,000 pods
    answers with all of theirs, and ``copy.deepcopy`` took half a second of it)."""
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": fastjson.copy(obj.get("metadata") or {})}


def partial_metadata_list(objs: list[dict], list_meta: dict) -> dict:
    """A meta.k8s.io/v1 PartialObjectMetadataList of ``objs``: each item's kind, apiVersion and metadata."""
    return {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": dict(list_meta),
            "items": [partial_metadata(o) for o in objs]}


def to_table(resource: str, objs: list[dict], resource_version: str, include_object: str = "Metadata",
             list_meta: dict | None = None) -> dict:
    """A meta.k8s.io/v1 Table of ``objs``; ``include_object`` is None, Metadata (default) or Object."""
    columns, row_fn = _printer(resource, objs)
    rows = []
    for o in objs:
        row: dict = {"cells": row_fn(o)}
        if include_object == "Object":
            row["object"] = fastjson.copy(o)
        elif include_object != "None":
            row["object"] = partial_metadata(o)
        rows.append(row)
    meta = {"resourceVersion": resource_version, **(list_meta or {})}
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": [
            {"name": n, "type": t, "format": "name" if n == "Name" else "", "description": d, "priority": p}
            for n, t, p, d in columns
        ],
        "rows": rows,
    }
