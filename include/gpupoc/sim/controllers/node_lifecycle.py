"""Kubelet heartbeats and the node lifecycle controller's reaction to them
(kubernetes ``pkg/controller/nodelifecycle/node_lifecycle_controller.go``).

``stop_kubelet`` is what ``systemctl stop kubelet`` on the node does: the kubelet stops posting status, its
containers keep running. Once ``timing.node_monitor_grace_seconds`` have passed (kube-controller-manager's
``--node-monitor-grace-period``, 40 s by default; 50 s from 1.32), the controller's pass marks the node
unreachable: Ready Unknown "Kubelet stopped posting node status.", the ``node.kubernetes.io/unreachable``
NoSchedule and NoExecute taints, NodeNotReady events (``nodes.fail_node``, with the GPUs untouched). The
taint-eviction controller then evicts its pods after their ``tolerationSeconds``. ``start_kubelet`` brings the
node back (``nodes.recover_node``).

Every ``timing.node_monitor_period_seconds`` (``--node-monitor-period``, 5 s) the controller also removes the
unreachable and not-ready NoExecute taints from nodes whose Ready condition is True (``processTaintBaseEviction``
-> ``markNodeAsReachable``): on a healthy node those taints do not stay, whoever put them there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import nodes

NOT_READY = "node.kubernetes.io/not-ready"
CONTROLLER_TAINTS = (nodes.UNREACHABLE, NOT_READY)


def _ready(node: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


@dataclass
class NodeLifecycle:
    """Which kubelets are stopped (and since when), and which nodes this controller marked unreachable."""

    state: ClusterState
    stopped: dict[str, float] = field(default_factory=dict)  # node -> time.monotonic() of the stop
    marked: set[str] = field(default_factory=set)
    _next_monitor: float = 0.0

    def run_pass(self) -> None:
        """Mark nodes whose kubelet stopped past the grace period; clear stray taints off Ready nodes."""
        timing = self.state.config.timing
        now = time.monotonic()
        for name, since in list(self.stopped.items()):
            if name not in self.marked and now - since >= timing.node_monitor_grace_seconds:
                self.marked.add(name)
                nodes.fail_node(self.state, name, gpus_lost=False)
        if now < self._next_monitor:
            return
        self._next_monitor = now + timing.node_monitor_period_seconds
        failed = nodes.failures(self.state)
        for node in list(self.state.store.values("nodes")):
            if (node.get("spec") or {}).get("taints") and node["metadata"]["name"] not in failed and _ready(node):
                self._mark_reachable(node)

    def _mark_reachable(self, node: dict) -> None:
        taints = (node.get("spec") or {}).get("taints") or []
        kept = [t for t in taints if not (t.get("key") in CONTROLLER_TAINTS and t.get("effect") == "NoExecute")]
        if len(kept) != len(taints):
            node["spec"]["taints"] = kept or None
            self.state.store.update("nodes", node)
            self.state.kick()


def lifecycle_for(state: ClusterState) -> NodeLifecycle:
    """The state's node lifecycle controller (created on first use, kept in ``state.addons``)."""
    existing = state.addons.get("node-lifecycle")
    return existing if isinstance(existing, NodeLifecycle) else state.addons.setdefault("node-lifecycle",
                                                                                         NodeLifecycle(state))


def _existing(state: ClusterState, name: str) -> dict:
    node = state.store.get("nodes", None, name)
    if node is None:
        known = ", ".join(n["metadata"]["name"] for n in state.store.list("nodes")[:20])
        raise nodes.NodeNotFound(f'nodes "{name}" not found; known nodes: {known}')
    return node


def stop_kubelet(state: ClusterState, name: str) -> dict:
    """Stop ``name``'s kubelet now (its node is marked unreachable after the grace period); returns the node."""
    node = _existing(state, name)
    lifecycle_for(state).stopped.setdefault(name, time.monotonic())
    state.kick()
    return node


def start_kubelet(state: ClusterState, name: str) -> dict:
    """Start ``name``'s kubelet again: a node this controller marked unreachable is Ready again."""
    _existing(state, name)
    lc = lifecycle_for(state)
    lc.stopped.pop(name, None)
    if name in lc.marked:
        lc.marked.discard(name)
        return nodes.recover_node(state, name)
    state.kick()
    return _existing(state, name)
