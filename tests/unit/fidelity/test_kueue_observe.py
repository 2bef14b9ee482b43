"""What the Kueue scenario records of a Workload and a queued pod, read from plain objects."""

from __future__ import annotations

from gpupoc.fidelity.kueue_observe import queued_pod, workload
from gpupoc.fidelity.model import StepRecord

WL = {"metadata": {"name": "pod-x-abcde"}, "status": {
    "conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
                    "message": "insufficient unused quota for nvidia.com/gpu in flavor f, 2 more needed"}],
    "schedulingStats": {"evictions": [{"reason": "Preempted", "underlyingCause": "", "count": 1}]}}}


def test_a_workloads_conditions_and_evictions_are_recorded_normalised():
    rec = StepRecord("s")
    workload(rec, "held", WL, ["pod-x-abcde"], [])
    assert rec.observations["held.condition.QuotaReserved"] == "False Pending"
    assert rec.observations["held.condition.QuotaReserved.message"].endswith("<n> more needed")
    assert rec.observations["held.condition.Admitted"] == "absent"
    assert rec.observations["held.evictions"] == "Preempted/-=1"
    assert rec.observations["held.admission"] == "absent"


def test_a_missing_workload_is_recorded_absent():
    rec = StepRecord("s")
    workload(rec, "x", {}, [], [])
    assert rec.observations == {"x.workload": "absent"}


def test_a_queued_pods_gates_order_and_flavor_marks_are_recorded():
    pod = {"kind": "Pod", "metadata": {"labels": {"kueue.x-k8s.io/managed": "true"},
                                       "finalizers": ["kueue.x-k8s.io/managed"]},
           "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}, {"name": "kueue.x-k8s.io/topology"}],
                    "tolerations": [{"key": "gpupoc.io/fidelity-flavor", "operator": "Exists"}]},
           "status": {"phase": "Pending", "conditions": [
               {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates"}]}}
    rec = StepRecord("s")
    queued_pod(rec, "p", pod, [], [])
    assert rec.observations["p.gates.order"] == "kueue.x-k8s.io/admission|kueue.x-k8s.io/topology"
    assert rec.observations["p.finalizers"] == "kueue.x-k8s.io/managed"
    assert (rec.observations["p.flavor.toleration"], rec.observations["p.flavor.nodeSelector"]) == ("true", "false")
    assert rec.observations["p.condition.PodScheduled"] == "False SchedulingGated"


def test_a_pod_already_gone_is_recorded_gone():
    rec = StepRecord("s")
    queued_pod(rec, "p", {"kind": "Status"}, [], [])
    assert rec.observations == {"p.pod": "gone"}
