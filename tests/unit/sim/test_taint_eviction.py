"""The taint-eviction controller: NoExecute taints evict pods as their tolerations allow, with the taint
manager's condition, events and audit identity; removing the taints cancels a pending eviction."""

from __future__ import annotations

import asyncio
import json

import pytest

from gpupoc.sim.controllers.taint_eviction import eviction_delay, matching_tolerations, min_toleration_seconds

try:
    from .kubelet_helpers import NODE, NS, VIRTUAL, bind, drive, events, get, make_state, phase, pod_obj, with_kubelet
except ImportError:
    from kubelet_helpers import NODE, NS, VIRTUAL, bind, drive, events, get, make_state, phase, pod_obj, with_kubelet

pytestmark = pytest.mark.timeout(60)
FAULT = {"key": "example.com/fault", "value": "yes", "effect": "NoExecute"}
UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}


def tol(key: str | None, seconds: int | None = None, effect: str | None = "NoExecute", **kw) -> dict:
    t = {"key": key, "operator": kw.get("operator", "Exists"), "effect": effect, **kw}
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return t


@pytest.mark.parametrize("taints,tolerations,delay", [
    ([FAULT], [], 0.0),                                                      # not tolerated: at once
    ([FAULT], [tol("example.com/fault")], None),                             # no seconds: forever
    ([FAULT], [tol(None)], None),                                            # empty key + Exists: all
    ([FAULT], [tol("example.com/fault", operator="Equal", value="no")], 0.0),  # wrong value
    ([FAULT], [tol("example.com/fault", 30, effect=None)], 30.0),           # empty effect matches NoExecute
    ([FAULT, UNREACHABLE], [tol("example.com/fault", 60), tol("node.kubernetes.io/unreachable", 20)], 20.0),
    ([FAULT, UNREACHABLE], [tol("example.com/fault", 60)], 0.0),             # one taint untolerated
    ([UNREACHABLE], [tol("node.kubernetes.io/unreachable", -5)], 0.0),       # <= 0: at once
    ([UNREACHABLE], [tol("node.kubernetes.io/unreachable", 20, effect="NoSchedule")], 0.0),
])
def test_eviction_delay_follows_the_taint_managers_toleration_rules(taints, tolerations, delay):
    node = {"spec": {"taints": taints + [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}}
    assert eviction_delay(node, {"spec": {"tolerations": tolerations}}) == delay


def test_no_noexecute_taint_means_no_eviction_and_tolerations_used_are_the_matching_ones():
    assert eviction_delay({"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}}, {"spec": {}}) is None
    ok, used = matching_tolerations([FAULT], [tol("other", 5), tol("example.com/fault", 9)])
    assert ok and [t["key"] for t in used] == ["example.com/fault"] and min_toleration_seconds(used) == 9.0


def taint(state, *taints: dict) -> None:
    node = state.store.get("nodes", None, NODE)
    node["spec"]["taints"] = [t for t in node["spec"].get("taints") or [] if t.get("effect") != "NoExecute"] + \
        list(taints)
    state.store.update("nodes", node)


def audit_lines(state) -> list[dict]:
    return [json.loads(x) for x in state.audit_log_path.read_text().splitlines()] if state.audit_log_path.exists() \
        else []


def test_an_untolerated_taint_on_a_running_node_deletes_the_pod_as_the_taint_manager(tmp_path):
    state = make_state(tmp_path)
    bind(state, pod_obj("victim", VIRTUAL, {"WORKLOAD_MODE": "hang"}, gpus=2), gpus=2)
    seen: dict = {}

    async def body(kl):
        await drive(kl, lambda: phase(state, "victim") == "Running")
        taint(state, FAULT)
        await drive(kl, lambda: (get(state, "victim") or {}).get("metadata", {}).get("deletionTimestamp"),
                    what="deletion")
        seen.update(get(state, "victim"))
        await drive(kl, lambda: get(state, "victim") is None, what="the kubelet removing the pod")

    asyncio.run(with_kubelet(state, body))
    dt = next(c for c in seen["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert (dt["status"], dt["reason"], dt["message"]) == (
        "True", "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")
    assert ("Normal", "TaintManagerEviction", f"Marking for deletion Pod {NS}/victim") in events(state, "victim")
    writes = [(e["verb"], e["objectRef"].get("subresource", ""), e["user"]["username"]) for e in audit_lines(state)
              if e["objectRef"].get("name") == "victim"]
    assert writes == [("patch", "status", "system:serviceaccount:kube-system:node-controller"),
                      ("delete", "", "system:serviceaccount:kube-system:node-controller")]
    assert state.inventory.free_count(NODE) == 8, "the kubelet gave the GPUs back"


def test_a_tolerated_taint_removed_in_time_cancels_the_eviction(tmp_path):
    state = make_state(tmp_path)
    bind(state, pod_obj("patient", VIRTUAL, {"WORKLOAD_MODE": "hang"}, tolerations=[tol("example.com/fault", 300)]))
    bind(state, pod_obj("done", VIRTUAL, {"WORKLOAD_DURATION_SECONDS": "0.1"}, node="training-node-1"))

    async def body(kl):
        await drive(kl, lambda: phase(state, "patient") == "Running" and phase(state, "done") == "Succeeded")
        taint(state, FAULT)
        await drive(kl, lambda: get(state, "done") is None, what="the ended pod removed at once")
        assert phase(state, "patient") == "Running", "300 s tolerated"
        taint(state)
        await drive(kl, lambda: any(r == "TaintManagerEviction" and m.startswith("Cancelling")
                                    for _, r, m in events(state, "patient")), what="the cancellation")

    asyncio.run(with_kubelet(state, body))
    assert ("Normal", "TaintManagerEviction", f"Cancelling deletion of Pod {NS}/patient") in events(state, "patient")
    assert not (get(state, "patient")["metadata"].get("deletionTimestamp"))
