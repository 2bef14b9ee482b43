"""Node failure and recovery: conditions, taints, events, XIDs, eviction after the pods' tolerations."""

from __future__ import annotations

import asyncio
import time

import psutil
import pytest

from gpupoc.sim.controllers import nodes
from gpupoc.sim.controllers.taint_eviction import TaintEviction
from gpupoc.sim.faults import Fault
from gpupoc.sim.store import NotFound

try:
    from .kubelet_helpers import (NODE, NS, VIRTUAL, WORKLOAD, as_v1pod, bind, cstate, drive, events, get, log_lines,
                                  make_state, phase, pod_obj, unreachable_for, with_kubelet)
except ImportError:
    from kubelet_helpers import (NODE, NS, VIRTUAL, WORKLOAD, as_v1pod, bind, cstate, drive, events, get, log_lines,
                                 make_state, phase, pod_obj, unreachable_for, with_kubelet)

pytestmark = pytest.mark.timeout(300)  # a hang guard: drive() fails first, naming what it awaited
OTHER = "training-node-2"


def node(state, name=NODE) -> dict:
    return state.store.get("nodes", None, name)


def condition(obj: dict, type_: str) -> dict:
    return next(c for c in obj["status"]["conditions"] if c["type"] == type_)


def test_fail_node_marks_it_unreachable_with_events_taints_and_xid(tmp_path):
    state = make_state(tmp_path)
    bind(state, pod_obj("victim", VIRTUAL, {"WORKLOAD_DURATION_SECONDS": "30"}, gpus=2), gpus=2)

    async def body(kl):
        await drive(kl, lambda: phase(state, "victim") == "Running")
        nodes.fail_node(state, NODE)

    asyncio.run(with_kubelet(state, body))
    ready = condition(node(state), "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
    taints = {(t["key"], t["effect"]): t for t in node(state)["spec"]["taints"]}
    assert "timeAdded" in taints[("node.kubernetes.io/unreachable", "NoExecute")]
    assert ("node.kubernetes.io/unreachable", "NoSchedule") in taints
    assert ("nvidia.com/gpu", "NoSchedule") in taints, "the pool's own taint stays"
    node_events = [e for e in state.store.list("events", "default") if e["involvedObject"]["name"] == NODE]
    assert [(e["reason"], e["message"], e["source"]["component"]) for e in node_events] == [
        ("NodeNotReady", f"Node {NODE} status is now: NodeNotReady", "node-controller")]
    assert ("Warning", "NodeNotReady", "Node is not ready") in events(state, "victim")
    assert condition(get(state, "victim"), "Ready")["status"] == "False"
    assert {g.xid for g in state.inventory.gpus[NODE]} == {79}
    assert {g.xid for g in state.inventory.gpus[OTHER]} == {0}


def test_pods_of_a_lost_node_fail_after_their_toleration_and_free_their_gpus(tmp_path):
    toleration = 2
    state = make_state(tmp_path)
    bind(state, pod_obj("lost-proc", WORKLOAD, {"WORKLOAD_MODE": "long"}, gpus=2,
                        tolerations=unreachable_for(toleration)), gpus=2)
    bind(state, pod_obj("lost-virt", VIRTUAL, {"WORKLOAD_MODE": "hang"}, gpus=1,
                        tolerations=unreachable_for(toleration)), gpus=1)
    pids = []

    async def body(kl):
        await drive(kl, lambda: any(line.startswith("epoch=1") for line in log_lines(state, "lost-proc"))
                    and phase(state, "lost-virt") == "Running", what="pods running")
        pids.extend(h.pid for h in kl.pods[(NS, "lost-proc")].handles.values())
        failed_at = time.monotonic()
        nodes.fail_node(state, NODE)
        state.addons["taint-eviction"].run_pass()
        if time.monotonic() - failed_at < toleration:  # a stalled machine may have let the toleration pass
            assert phase(state, "lost-proc") == "Running", "nothing is evicted before the pods' tolerationSeconds"
        await drive(kl, lambda: phase(state, "lost-proc") == "Failed" and phase(state, "lost-virt") == "Failed",
                    what="eviction")
        await drive(kl, lambda: not psutil.pid_exists(pids[0]), what="process killed")

    asyncio.run(with_kubelet(state, body))
    for name in ("lost-proc", "lost-virt"):
        st = get(state, name)["status"]
        assert (st["reason"], st["message"]) == (
            "NodeLost", f"Node {NODE} which was running pod {name} is unresponsive")
        dt = condition(get(state, name), "DisruptionTarget")
        assert (dt["status"], dt["reason"]) == ("True", "DeletionByTaintManager")
        assert ("Normal", "TaintManagerEviction", f"Marking for deletion Pod {NS}/{name}") in events(state, name)
        assert cstate(state, name)["state"]["terminated"]["exitCode"] == 137
        assert state.logs.get(NS, name, "base").closed
        assert as_v1pod(get(state, name)).status.reason == "NodeLost"
    assert log_lines(state, "lost-proc"), "the evicted pod's log stays readable"
    assert state.inventory.free_count(NODE) == 8


def test_gpus_leak_fault_keeps_evicted_pods_gpus(tmp_path):
    state = make_state(tmp_path, faults=(Fault.GPUS_LEAK,))
    bind(state, pod_obj("held", VIRTUAL, {"WORKLOAD_MODE": "hang"}, gpus=3, tolerations=unreachable_for(0)), gpus=3)

    async def body(kl):
        await drive(kl, lambda: phase(state, "held") == "Running")
        nodes.fail_node(state, NODE)
        await drive(kl, lambda: phase(state, "held") == "Failed", what="eviction")

    asyncio.run(with_kubelet(state, body))
    assert len(state.inventory.held_by((NS, "held"))) == 3
    assert (NS, "held") not in state.inventory.telemetry, "leaked GPUs read idle"


def test_recover_node_restores_ready_removes_taints_and_clears_xid(tmp_path):
    state = make_state(tmp_path)
    nodes.fail_node(state, NODE)
    nodes.recover_node(state, NODE)
    ready = condition(node(state), "Ready")
    assert (ready["status"], ready["reason"]) == ("True", "KubeletReady")
    assert condition(node(state), "MemoryPressure")["status"] == "False"
    assert [t["key"] for t in node(state)["spec"]["taints"]] == ["nvidia.com/gpu"]
    assert {g.xid for g in state.inventory.gpus[NODE]} == {0}
    node_events = [(e["reason"], e["message"]) for e in state.store.list("events", "default")
                   if e["involvedObject"]["name"] == NODE]
    assert (("NodeReady", f"Node {NODE} status is now: NodeReady")) in node_events
    assert nodes.failures(state) == {}


def test_failing_a_failed_node_again_records_nothing_new(tmp_path):
    state = make_state(tmp_path)
    nodes.fail_node(state, NODE)
    rv = state.store.rv
    nodes.fail_node(state, NODE)
    assert state.store.rv == rv


def test_unknown_node_is_not_found(tmp_path):
    state = make_state(tmp_path)
    with pytest.raises(NotFound, match='nodes "nope" not found'):
        nodes.fail_node(state, "nope")
    with pytest.raises(KeyError):
        nodes.recover_node(state, "nope")


def test_pods_tolerating_unreachable_forever_are_not_evicted(tmp_path):
    state = make_state(tmp_path)
    bind(state, pod_obj("tolerant", VIRTUAL, {"WORKLOAD_MODE": "hang"}, tolerations=unreachable_for(None)))
    bind(state, pod_obj("short-tol", VIRTUAL, {"WORKLOAD_MODE": "hang"}, tolerations=unreachable_for(0)))
    bind(state, pod_obj("default-tol", VIRTUAL, {"WORKLOAD_MODE": "hang"}))

    async def body(kl):
        await drive(kl, lambda: all(phase(state, n) == "Running" for n in ("tolerant", "short-tol", "default-tol")))
        nodes.fail_node(state, NODE)
        await drive(kl, lambda: phase(state, "short-tol") == "Failed", what="eviction")

    asyncio.run(with_kubelet(state, body))
    assert phase(state, "tolerant") == "Running"
    assert phase(state, "default-tol") == "Running", "the default toleration (300 s) has not run out"
    assert ("Normal", "TaintManagerEviction", f"Marking for deletion Pod {NS}/short-tol") in events(state, "short-tol")


def test_taint_eviction_without_tainted_nodes_changes_nothing(tmp_path):
    state = make_state(tmp_path)
    rv = state.store.rv
    TaintEviction(state).run_pass()
    assert state.store.rv == rv
