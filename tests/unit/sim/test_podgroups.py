"""The PodGroup membership index of the gang schedulers."""

from __future__ import annotations

from gpupoc.sim.controllers.podgroups import GroupIndex, pod_state
from gpupoc.sim.store import Store


def pod(name, group=None, scheduler="volcano", node=None, phase="Pending", gates=None, deleting=False):
    meta = {"name": name, "namespace": "ns", "annotations": {"g": group} if group else {}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec = {"schedulerName": scheduler, "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}
    if node:
        spec["nodeName"] = node
    if gates:
        spec["schedulingGates"] = gates
    return {"metadata": meta, "spec": spec, "status": {"phase": phase}}


def test_pod_states():
    assert pod_state(pod("a"), False) == "pending"
    assert pod_state(pod("a", gates=[{"name": "x"}]), False) == "gated"
    assert pod_state(pod("a", node="n"), False) == "active"
    assert pod_state(pod("a", node="n", deleting=True), False) == "releasing"
    assert pod_state(pod("a", node="n", phase="Succeeded"), False) == "succeeded"
    assert pod_state(pod("a"), True) is None


def test_members_move_between_states_in_the_same_group_object():
    store = Store()
    index = GroupIndex(store, "volcano", ("g",))
    store.create("pods", pod("a"))
    assert index.ungrouped == {("ns", "a")}
    p = store.get("pods", "ns", "a")
    p["metadata"]["annotations"]["g"] = "grp"
    store.update("pods", p)
    group = index.group(("ns", "grp"))
    assert index.ungrouped == set() and group.members["pending"] == {("ns", "a")} and group.gpus_of("pending") == 2
    p["spec"]["nodeName"] = "n1"
    store.update("pods", p)
    assert index.group(("ns", "grp")) is group and group.count("active") == 1 and group.count("pending") == 0
    store.delete("pods", "ns", "a")
    assert ("ns", "grp") not in index.groups


def test_pods_of_other_schedulers_are_not_followed():
    store = Store()
    index = GroupIndex(store, "volcano", ("g",))
    store.create("pods", pod("a", group="grp", scheduler="default-scheduler"))
    assert index.groups == {} and index.ungrouped == set() and index.version == 0
