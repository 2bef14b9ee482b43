"""SVC-04's judgement of a preempted serving replica, on the platform's records as QC-13's: a preemptor a real
kube-scheduler names by uid alone is resolved through the pods the pipeline knows; one no record resolves leaves
the row not verified, never failed."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

from gpupoc.pipeline.preemptors import Facts, KnownPod
from gpupoc.pipeline.service_history import Replica
from gpupoc.podspec import labels as L
from gpupoc.steps.service_collect import _replica_rows

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
UID = "039f34ac-5d2e-4b7a-9c1e-2f6a8b9d0e11"
NS, POD, NODE = "team-serving", "svc-infer-7d9f-abcde", "inference-node-1"
PREEMPTOR = KnownPod("team-a/qc-high-1", 1_000_000, NODE, UID)


def preempted_replica() -> Replica:
    """A replica kube-scheduler preempted: its DisruptionTarget condition names nobody."""
    pod = {"metadata": {"namespace": NS, "name": POD, "uid": "replica-uid", "labels": {L.SERVICE: "svc-infer"},
                        "creationTimestamp": (T0 - timedelta(minutes=5)).isoformat()},
           "spec": {"priority": 1000, "nodeName": NODE},
           "status": {"phase": "Running", "conditions": [
               {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                "message": "default-scheduler: preempting to accommodate a higher priority pod",
                "lastTransitionTime": T0.isoformat()}]}}
    return Replica(pod, T0 - timedelta(minutes=5), T0 - timedelta(minutes=4), T0 + timedelta(seconds=2))


def preempted_event() -> dict:
    return {"involvedObject": {"kind": "Pod", "namespace": NS, "name": POD}, "reason": "Preempted",
            "message": f"Preempted by pod {UID} on node {NODE}", "source": {"component": "default-scheduler"},
            "lastTimestamp": T0.isoformat()}


def rows(facts: Facts | None, runs: list[dict] = ()) -> list:
    records = SimpleNamespace(events=[preempted_event()], deletions={}, uids={})
    ctx = SimpleNamespace(platform_records=lambda namespaces: records)
    service = SimpleNamespace(name="svc-infer", namespace=NS, tenant=SimpleNamespace(name="serving"))
    return _replica_rows(ctx, [service], [preempted_replica()], list(runs), facts)


def known(pod: KnownPod) -> Facts:
    facts = Facts()
    facts.add(pod)
    return facts


def test_a_replica_preempted_by_a_uid_named_higher_priority_wave_pod_is_preempted_by_higher():
    [row] = rows(known(PREEMPTOR))
    assert (row.end, row.preemptor, row.preemptor_priority, row.preempted_by_higher, row.preemption_judged) == \
        ("preempted", "team-a/qc-high-1", 1_000_000, True, "judged")


def test_a_uid_no_record_resolves_leaves_the_row_not_verified_never_failed():
    [row] = rows(None, runs=[{"namespace": "team-a", "pod": "qc-high-1", "priority": 1_000_000, "node": NODE}])
    assert (row.end, row.preempted_by_higher, row.preemption_judged, row.preemptor) == \
        ("preempted", None, "unresolved", f"uid {UID}")
    assert "no known priority" in row.preemptor_named_by


def test_a_preemptor_resolved_to_a_lower_priority_pod_still_fails():
    [row] = rows(known(KnownPod("team-a/qc-low-1", 10, NODE, UID)))
    assert (row.preemptor, row.preemptor_priority, row.preempted_by_higher, row.preemption_judged) == \
        ("team-a/qc-low-1", 10, False, "judged")
