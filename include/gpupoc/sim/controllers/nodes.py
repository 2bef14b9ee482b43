"""Node failure and recovery, as the node lifecycle controller records them.

``fail_node`` is what an operator causes by pulling a node's plug: the node's Ready condition goes
Unknown, it gets the ``node.kubernetes.io/unreachable`` taints, NodeNotReady events are recorded on the
node and its pods, and its GPUs report XID 79 (fallen off the bus). The taint-eviction controller
(``taint_eviction``) evicts its pods after their tolerations allow, through ``evict_pod`` (TaintManagerEviction,
DisruptionTarget, phase Failed, reason NodeLost): their containers are killed, their logs stay readable, their
GPUs are freed (unless the ``gpus-leak`` fault holds them); the evictions are audited as the node-controller
service account and, under a recreating behaviour profile, the pods are replaced (``disruption.evicted``).
``recover_node`` undoes the node's side.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from gpupoc.sim import clock
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import disruption
from gpupoc.sim.controllers import kubelet_status as ks
from gpupoc.sim.events import NORMAL, WARNING
from gpupoc.sim.store import NotFound

UNREACHABLE = "node.kubernetes.io/unreachable"
XID_FALLEN_OFF_BUS = 79
NODE_CONTROLLER = "node-controller"
TAINT_EVICTION = "taint-eviction-controller"

# condition type -> (status, reason, message) of a healthy node, as the kubelet posts them
HEALTHY = {
    "MemoryPressure": ("False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
}


class NodeNotFound(NotFound, KeyError):
    """No node of that name (the API answers 404)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "node not found"


@dataclass
class Failure:
    since: float  # time.monotonic() of the failure


def failures(state: ClusterState) -> dict[str, Failure]:
    """Nodes failed with ``fail_node`` and not yet recovered."""
    return state.node_failures


def _node(state: ClusterState, name: str) -> dict:
    node = state.store.get("nodes", None, name)
    if node is None:
        known = ", ".join(n["metadata"]["name"] for n in state.store.list("nodes")[:20])
        raise NodeNotFound(f'nodes "{name}" not found; known nodes: {known}')
    return node


def _pods_on(state: ClusterState, name: str) -> list[dict]:
    return [p for p in state.store.list("pods")
            if (p.get("spec") or {}).get("nodeName") == name
            and (p.get("status") or {}).get("phase") not in ks.TERMINAL]


def fail_node(state: ClusterState, name: str, gpus_lost: bool = True) -> dict:
    """Make ``name`` unreachable now; returns the node. Failing a failed node changes nothing. ``gpus_lost``:
    its GPUs fell off the bus (XID 79); False when only its kubelet stopped."""
    node = _node(state, name)
    fails = failures(state)
    if name in fails:
        return node
    now = clock.rfc3339()
    for cond in node.setdefault("status", {}).setdefault("conditions", []):
        if cond.get("status") != "Unknown":
            cond["lastTransitionTime"] = now
        cond.update(status="Unknown", reason="NodeStatusUnknown", message="Kubelet stopped posting node status.")
    taints = [t for t in (node.setdefault("spec", {}).get("taints") or []) if t.get("key") != UNREACHABLE]
    taints += [{"key": UNREACHABLE, "effect": "NoSchedule", "timeAdded": now},
               {"key": UNREACHABLE, "effect": "NoExecute", "timeAdded": now}]
    node["spec"]["taints"] = taints
    state.store.update("nodes", node)
    fails[name] = Failure(since=time.monotonic())
    state.events.record(node, "NodeNotReady", f"Node {name} status is now: NodeNotReady", NORMAL,
                        component=NODE_CONTROLLER)
    for pod in _pods_on(state, name):
        status = pod.setdefault("status", {})
        ks.set_condition(status, "Ready", "False")
        ks.order_conditions(status)
        state.store.update("pods", pod)
        state.events.record(pod, "NodeNotReady", "Node is not ready", WARNING, component=NODE_CONTROLLER)
    for gpu in state.inventory.gpus.get(name, []) if gpus_lost else []:
        gpu.xid = XID_FALLEN_OFF_BUS
    state.kick()
    return node


def recover_node(state: ClusterState, name: str) -> dict:
    """Bring ``name`` back: Ready, no unreachable taints, XID cleared; returns the node."""
    node = _node(state, name)
    failures(state).pop(name, None)
    now = clock.rfc3339()
    conds = node.setdefault("status", {}).setdefault("conditions", [])
    for cond in conds:
        healthy = HEALTHY.get(cond.get("type"))
        if healthy is None:
            continue
        if cond.get("status") != healthy[0]:
            cond["lastTransitionTime"] = now
        cond.update(status=healthy[0], reason=healthy[1], message=healthy[2], lastHeartbeatTime=now)
    taints = [t for t in (node.setdefault("spec", {}).get("taints") or []) if t.get("key") != UNREACHABLE]
    was_down = len(taints) != len(node["spec"].get("taints") or [])
    node["spec"]["taints"] = taints or None
    state.store.update("nodes", node)
    if was_down:
        state.events.record(node, "NodeReady", f"Node {name} status is now: NodeReady", NORMAL,
                            component="kubelet", host=name)
    for gpu in state.inventory.gpus.get(name, []):
        gpu.xid = 0
    state.kick()
    return node


def evict_pod(state: ClusterState, pod: dict, node: str) -> None:
    """The taint-eviction controller's verdict on a pod of a lost node: Failed, NodeLost."""
    meta = pod["metadata"]
    key = (meta["namespace"], meta["name"])
    state.events.record(pod, "TaintManagerEviction", f"Marking for deletion Pod {key[0]}/{key[1]}", NORMAL,
                        component=TAINT_EVICTION)
    now = clock.rfc3339()
    status = pod.setdefault("status", {})
    for cs in status.get("containerStatuses") or []:
        state_ = cs.get("state") or {}
        if "terminated" in state_:
            continue
        started = (state_.get("running") or {}).get("startedAt")
        cs["state"] = ks.terminated(137, "ContainerStatusUnknown", started, cs.get("containerID"),
                                    "The container could not be located when the pod was terminated", now)
        cs["ready"] = False
        cs["started"] = False
    ks.set_condition(status, "DisruptionTarget", "True", "DeletionByTaintManager",
                     "Taint manager: deleting due to NoExecute taint")
    for type_ in ("Ready", "ContainersReady"):
        ks.set_condition(status, type_, "False", "PodFailed")
    ks.set_condition(status, "PodReadyToStartContainers", "False")
    ks.order_conditions(status)
    status["phase"] = "Failed"
    status["reason"] = "NodeLost"
    status["message"] = f"Node {node} which was running pod {key[1]} is unresponsive"
    kubelet = state.kubelet
    if kubelet is not None:
        kubelet.evict(key)  # kill the containers before the status says they are gone
    state.store.update("pods", pod)
    for cs in status.get("containerStatuses") or []:
        log = state.logs.get(key[0], key[1], cs.get("name", ""))
        if log is not None:
            log.close()
    if state.reactors.keeps_gpus("Failed", False):  # the pod failed with its node
        state.inventory.telemetry.pop(key, None)
    else:
        state.inventory.release(key)
    disruption.evicted(state, pod)
