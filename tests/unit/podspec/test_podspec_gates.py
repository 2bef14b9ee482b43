"""Releasing the wave removes only the pipeline's gate."""

from __future__ import annotations

from kubernetes.client import V1PodSchedulingGate

from gpupoc.podspec import is_gated, release_gate_json_patch, release_gate_patch

KUEUE_GATE = "kueue.x-k8s.io/admission"


def test_strategic_merge_patch_deletes_only_our_gate():
    assert release_gate_patch() == {"spec": {"schedulingGates": [{"$patch": "delete",
                                                                  "name": "gpupoc.io/wave-release"}]}}


def test_json_patch_removes_by_index_with_a_test_guard():
    gates = [{"name": KUEUE_GATE}, {"name": "gpupoc.io/wave-release"}]
    assert release_gate_json_patch(gates) == [
        {"op": "test", "path": "/spec/schedulingGates/1/name", "value": "gpupoc.io/wave-release"},
        {"op": "remove", "path": "/spec/schedulingGates/1"},
    ]


def test_json_patch_handles_models_names_duplicates_and_absence():
    gates = [V1PodSchedulingGate(name="gpupoc.io/wave-release"), V1PodSchedulingGate(name=KUEUE_GATE),
             V1PodSchedulingGate(name="gpupoc.io/wave-release")]
    ops = release_gate_json_patch(gates)
    assert [o["path"] for o in ops if o["op"] == "remove"] == ["/spec/schedulingGates/2", "/spec/schedulingGates/0"]
    assert release_gate_json_patch([KUEUE_GATE]) == []
    assert release_gate_json_patch(None) == []


def test_json_patch_applied_keeps_other_gates():
    """Apply the ops the way the API server does (RFC 6902) and check what remains."""
    pod = {"spec": {"schedulingGates": [{"name": "gpupoc.io/wave-release"}, {"name": KUEUE_GATE}]}}
    for op in release_gate_json_patch(pod["spec"]["schedulingGates"]):
        idx = int(op["path"].split("/")[3])
        if op["op"] == "test":
            assert pod["spec"]["schedulingGates"][idx]["name"] == op["value"]
        else:
            del pod["spec"]["schedulingGates"][idx]
    assert pod["spec"]["schedulingGates"] == [{"name": KUEUE_GATE}]
    assert not is_gated(pod) and is_gated({"spec": {"schedulingGates": [{"name": "gpupoc.io/wave-release"}]}})
