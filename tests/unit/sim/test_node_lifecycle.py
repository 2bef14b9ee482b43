"""Kubelet heartbeats and the node lifecycle controller: a stopped kubelet's node turns unreachable after the
grace period (its containers still running), its pods go after their tolerations; a Ready node sheds the
unreachable taint whoever put it there."""

from __future__ import annotations

import asyncio

import pytest

from gpupoc.sim.controllers import node_lifecycle as nl
from gpupoc.sim.controllers.nodes import NodeNotFound

try:
    from .kubelet_helpers import (NODE, NS, VIRTUAL, bind, drive, events, get, make_state, phase, pod_obj,
                                  unreachable_for, with_kubelet)
except ImportError:
    from kubelet_helpers import (NODE, NS, VIRTUAL, bind, drive, events, get, make_state, phase, pod_obj,
                                 unreachable_for, with_kubelet)

pytestmark = pytest.mark.timeout(60)


def node(state) -> dict:
    return state.store.get("nodes", None, NODE)


def ready(state) -> str:
    return next(c["status"] for c in node(state)["status"]["conditions"] if c["type"] == "Ready")


def taints(state) -> set[tuple[str, str]]:
    return {(t["key"], t["effect"]) for t in node(state)["spec"].get("taints") or []}


def test_a_stopped_kubelet_makes_its_node_unreachable_after_the_grace_and_its_pods_follow(tmp_path):
    state = make_state(tmp_path, node_monitor_grace_seconds=0.3)
    bind(state, pod_obj("short", VIRTUAL, {"WORKLOAD_MODE": "hang"}, gpus=1, tolerations=unreachable_for(1)), gpus=1)
    bind(state, pod_obj("default", VIRTUAL, {"WORKLOAD_MODE": "hang"}, gpus=1), gpus=1)  # 300 s by admission

    async def body(kl):
        await drive(kl, lambda: phase(state, "short") == "Running" and phase(state, "default") == "Running")
        nl.stop_kubelet(state, NODE)
        assert ready(state) == "True", "the node controller has not noticed yet"
        await drive(kl, lambda: ready(state) == "Unknown", what="the node marked unreachable")
        assert ("node.kubernetes.io/unreachable", "NoExecute") in taints(state)
        assert phase(state, "short") == "Running", "its containers still run: only the kubelet stopped"
        await drive(kl, lambda: phase(state, "short") == "Failed", what="the short toleration running out")

    asyncio.run(with_kubelet(state, body))
    ready_cond = next(c for c in node(state)["status"]["conditions"] if c["type"] == "Ready")
    assert (ready_cond["reason"], ready_cond["message"]) == (
        "NodeStatusUnknown", "Kubelet stopped posting node status.")
    assert {g.xid for g in state.inventory.gpus[NODE]} == {0}, "the GPUs did not fall off the bus"
    assert ("Warning", "NodeNotReady", "Node is not ready") in events(state, "short")
    assert phase(state, "default") == "Running"
    assert state.inventory.free_count(NODE) == 7, "the evicted pod's GPU is free, the other's still held"


def test_starting_the_kubelet_again_makes_the_node_ready_without_its_taints(tmp_path):
    state = make_state(tmp_path, node_monitor_grace_seconds=0.0)
    nl.stop_kubelet(state, NODE)
    nl.lifecycle_for(state).run_pass()
    assert ready(state) == "Unknown"
    nl.start_kubelet(state, NODE)
    assert ready(state) == "True" and taints(state) == {("nvidia.com/gpu", "NoSchedule")}
    with pytest.raises(NodeNotFound, match='nodes "nope" not found'):
        nl.stop_kubelet(state, "nope")


def test_a_ready_node_sheds_the_unreachable_taint_so_a_tolerating_pod_stays(tmp_path):
    state = make_state(tmp_path, node_monitor_period_seconds=0.2)
    bind(state, pod_obj("tolerant", VIRTUAL, {"WORKLOAD_MODE": "hang"}, tolerations=unreachable_for(30)))
    bind(state, pod_obj("intolerant", VIRTUAL, {"WORKLOAD_MODE": "hang"}, tolerations=unreachable_for(0)))

    async def body(kl):
        await drive(kl, lambda: phase(state, "tolerant") == "Running" and phase(state, "intolerant") == "Running")
        n = node(state)
        n["spec"]["taints"] = [*n["spec"]["taints"], {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]
        state.store.update("nodes", n)
        await drive(kl, lambda: ("node.kubernetes.io/unreachable", "NoExecute") not in taints(state),
                    what="the node lifecycle controller removing the taint")
        await drive(kl, lambda: get(state, "intolerant") is None, what="the intolerant pod's eviction")

    asyncio.run(with_kubelet(state, body))
    assert phase(state, "tolerant") == "Running"
    assert ("Normal", "TaintManagerEviction", f"Cancelling deletion of Pod {NS}/tolerant") in events(state, "tolerant")
