"""What a class's services went through, from the observer's snapshots (``pipeline/service_history.py``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from gpupoc.pipeline.service_history import (ReplicaTracker, endpoint_dropped_at, held_gpus, replacement_ready_at,
                                             replica_end, snapshots)

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
SVC = "svc-infer-abc123"


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def replica(name: str, node: str = "inference-node-1", ready: bool = True, gpus: int = 1, **status) -> dict:
    conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    return {"metadata": {"name": name, "namespace": "team-serving", "uid": f"uid-{name}",
                         "creationTimestamp": T0.isoformat(), "labels": {"gpupoc.io/service": SVC}},
            "spec": {"nodeName": node, "containers": [{"name": "base", "resources": {"limits": {
                "nvidia.com/gpu": str(gpus)}}}]},
            "status": {"phase": status.pop("phase", "Running"), "conditions": conditions, **status}}


def endpoint_slice(ready: list[str], not_ready: list[str] = ()) -> dict:
    eps = [{"targetRef": {"name": p}, "addresses": ["10.8.1.2"], "conditions": {"ready": True}} for p in ready]
    eps += [{"targetRef": {"name": p}, "addresses": ["10.8.1.3"], "conditions": {"ready": False}} for p in not_ready]
    return {"metadata": {"labels": {"kubernetes.io/service-name": SVC}}, "endpoints": eps}


def test_a_snapshot_reads_the_deployment_s_replicas_and_the_slices_endpoints_of_its_service_only():
    dep = {"metadata": {"name": SVC}, "spec": {"replicas": 2}, "status": {"readyReplicas": 1, "availableReplicas": 1}}
    other = {"metadata": {"labels": {"kubernetes.io/service-name": "other"}},
             "endpoints": [{"targetRef": {"name": "x"}, "conditions": {"ready": True}}]}
    [s] = snapshots(T0, [SVC], [dep], [endpoint_slice(["a"], ["b"]), other])
    assert (s.desired, s.ready_replicas, s.ready_endpoints, s.not_ready_endpoints) == (2, 1, ("a",), ("b",))
    [gone] = snapshots(T0, [SVC], [], [])
    assert gone.desired is None and gone.ready_endpoints == ()


def test_the_tracker_keeps_when_each_replica_was_first_ready_and_first_gone():
    tracker = ReplicaTracker()
    tracker.see(at(0), [replica("a", ready=False), replica("b")])
    tracker.see(at(2), [replica("a")])  # b deleted between the two looks
    tracker.see(at(4), [replica("a", phase="Failed")])
    a, b = tracker.replicas["uid-a"], tracker.replicas["uid-b"]
    assert (a.ready_at, a.gone_at) == (at(2), at(4))
    assert (b.ready_at, b.gone_at) == (at(0), at(2))


def test_a_replica_s_end_comes_from_the_platform_s_own_records():
    tracker = ReplicaTracker()
    evicted = replica("a", phase="Failed", reason="NodeLost")
    evicted["status"]["conditions"].append({"type": "DisruptionTarget", "status": "True",
                                            "reason": "DeletionByTaintManager", "message": "Taint manager: deleting"})
    tracker.see(at(0), [evicted, replica("b"), replica("c")])
    tracker.see(at(1), [replica("c")])
    ends = {r.name: replica_end(r, events=[{
        "involvedObject": {"kind": "Pod", "namespace": "team-serving", "name": "b"}, "reason": "Preempted",
        "message": "Preempted by pod team-nlp/train-1 on node inference-node-1", "type": "Normal",
        "lastTimestamp": at(1).isoformat()}]) for r in tracker.replicas.values()}
    assert ends["a"].outcome == "evicted" and ends["a"].reason == "DeletionByTaintManager"
    assert ends["b"].outcome == "preempted" and ends["b"].by == "team-nlp/train-1"
    assert ends["c"].outcome == "running"


def test_the_endpoint_drop_and_the_replacement_are_timed_from_the_failure():
    dep = {"metadata": {"name": SVC}, "spec": {"replicas": 1}, "status": {}}
    history = (snapshots(at(0), [SVC], [dep], [endpoint_slice(["a"])]) +
               snapshots(at(3), [SVC], [dep], [endpoint_slice(["a"])]) +
               snapshots(at(5), [SVC], [dep], [endpoint_slice([], ["a"])]))
    assert endpoint_dropped_at(history, SVC, "a", at(2)) == at(5)
    assert endpoint_dropped_at(history[:2], SVC, "a", at(2)) is None, "never seen dropped: no time"
    tracker = ReplicaTracker()
    tracker.see(at(0), [replica("a")])
    late = replica("new", ready=False)
    late["metadata"]["creationTimestamp"] = at(6).isoformat()
    tracker.see(at(6), [late])
    assert replacement_ready_at(list(tracker.replicas.values()), {"a", "new"}, at(2)) == (None, None)
    tracker.see(at(9), [replica("new") | {"metadata": late["metadata"]}])
    assert replacement_ready_at(list(tracker.replicas.values()), {"a", "new"}, at(2)) == ("new", at(9))


def test_held_gpus_is_the_most_the_replicas_held_on_each_node_at_once():
    tracker = ReplicaTracker()
    tracker.see(at(0), [replica("a", gpus=1), replica("b", gpus=1)])
    tracker.see(at(5), [replica("b", gpus=1), replica("c", node="inference-node-2", gpus=2)])
    assert held_gpus(list(tracker.replicas.values())) == {"inference-node-1": 2, "inference-node-2": 2}
