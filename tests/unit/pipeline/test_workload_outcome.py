"""One vocabulary of outcomes, read from the platform's own records whatever its wording."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from gpupoc.common.outcomes import WorkloadOutcome as O
from gpupoc.pipeline.workload_outcome import (Deletion, Rejection, Statement, classify, event_statements,
                                              group_event_statements, named_pod, pod_statements, preemptor)

T = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
UID = "7d0e5a52-1c1b-4f35-9a65-0c2f3e9b1a11"


def pod(phase="Running", *, exit_code=None, reason=None, conditions=(), deleting=False, status_reason=None):
    term = {"exitCode": exit_code, "reason": reason, "finishedAt": "2026-11-30T09:01:00Z"} \
        if exit_code is not None else None
    meta = {"name": "p", "namespace": "team-a"}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-30T09:00:30Z"
    st = {"phase": phase, "conditions": list(conditions),
          "containerStatuses": [{"name": "base", "state": {"terminated": term} if term else {"running": {}}}]}
    if status_reason:
        st["reason"] = status_reason
    return {"metadata": meta, "status": st}


def ev(reason, message, component="default-scheduler", name="p", ns="team-a", at="2026-11-30T09:00:20Z"):
    return {"metadata": {"namespace": ns}, "involvedObject": {"name": name, "namespace": ns}, "reason": reason,
            "message": message, "source": {"component": component}, "lastTimestamp": at}


def test_a_succeeded_pod_succeeded_even_when_it_was_removed_since():
    assert classify(pod("Succeeded", exit_code=0, reason="Completed"), present=True).outcome is O.SUCCEEDED
    assert classify(pod("Succeeded", exit_code=0), present=False).outcome is O.SUCCEEDED


def test_a_failed_container_is_a_failure_with_its_exit_code_not_an_eviction_from_a_node_event():
    events = event_statements([ev("NodeNotReady", "Node is not ready", "node-controller")], "team-a", "p")
    r = classify(pod("Failed", exit_code=3, reason="Error"), present=True, events=events)
    assert r.outcome is O.FAILED and r.reason == "Error" and "3" in r.message


def test_a_vanished_pod_with_the_default_schedulers_preempted_event_was_preempted_and_names_the_preemptor():
    events = event_statements([ev("Preempted", f"Preempted by pod {UID} on node training-node-3")], "team-a", "p")
    r = classify(pod(), present=False, events=events, uids={UID: "team-b/high-0"})
    assert r.outcome is O.PREEMPTED and r.by == "team-b/high-0" and r.explained
    assert "training-node-3" in r.evidence()


def test_the_disruption_target_condition_alone_says_preempted_while_the_pod_terminates():
    cond = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
            "message": "default-scheduler: preempting to accommodate a higher priority pod"}
    r = classify(pod(deleting=True, conditions=[cond]), present=True)
    assert r.outcome is O.PREEMPTED and r.source == "condition DisruptionTarget"


@pytest.mark.parametrize("reason, message, component", [
    ("Preempted", "Preempted to accommodate a workload (UID: 1b2c) due to prioritization in the ClusterQueue",
     "kueue-admission"),
    ("Evict", "Pod is preempted by the scheduler to reclaim resources for queue team-b", "volcano"),
    ("Preempt", "pod team-a/p was preempted by pod team-b/h", "kai-scheduler"),
])
def test_other_schedulers_wording_of_a_preemption_is_still_a_preemption(reason, message, component):
    events = event_statements([ev(reason, message, component)], "team-a", "p")
    assert classify(pod(), present=False, events=events).outcome is O.PREEMPTED


@pytest.mark.parametrize("reason, message", [
    ("TaintManagerEviction", "Marking for deletion Pod team-a/p"),
    ("NodeNotReady", "Node is not ready"),
    ("Evicted", "The node was low on resource: memory."),
])
def test_node_failure_and_pressure_wording_is_an_eviction(reason, message):
    events = event_statements([ev(reason, message, "node-controller")], "team-a", "p")
    assert classify(pod(), present=False, events=events).outcome is O.EVICTED


def test_a_pod_failed_with_status_reason_evicted_was_evicted():
    r = classify(pod("Failed", status_reason="Evicted"), present=True)
    assert r.outcome is O.EVICTED and r.source == "pod status"


def test_a_kueue_workload_evicted_condition_owning_the_pod_explains_it():
    owner = [Statement("Preempted", "Preempted to accommodate a higher priority Workload", T,
                       "Workload condition Evicted")]
    assert classify(pod(), present=False, owner=owner).outcome is O.PREEMPTED


@pytest.mark.parametrize("user, outcome", [
    ("system:kube-scheduler", O.PREEMPTED),
    ("system:serviceaccount:kube-system:node-controller", O.EVICTED),
    ("system:serviceaccount:team-b:runner", O.DELETED),
])
def test_without_a_statement_the_audit_logs_first_delete_names_who_ended_it(user, outcome):
    deletions = [Deletion("system:node:training-node-1", datetime(2026, 11, 30, 9, 5, tzinfo=timezone.utc)),
                 Deletion(user, T)]
    r = classify(pod(), present=False, deletions=deletions)
    assert r.outcome is outcome and r.by == user and r.source == "audit log"


def test_a_pod_that_vanished_with_nothing_saying_why_is_lost():
    events = event_statements([ev("FailedScheduling", "0/5 nodes are available: 5 Insufficient nvidia.com/gpu.")],
                              "team-a", "p")
    r = classify(pod("Pending"), present=False, events=events)
    assert r.outcome is O.LOST and not r.explained


def test_events_of_another_pod_or_namespace_do_not_explain_this_one():
    events = event_statements([ev("Preempted", "Preempted by pod x", name="other"),
                               ev("Preempted", "Preempted by pod x", ns="team-b")], "team-a", "p")
    assert events == []
    assert classify(pod(), present=False, events=events).outcome is O.LOST


def test_a_refused_creation_is_rejected_with_the_admission_message():
    msg = 'pods "p" is forbidden: exceeded quota: team-a-gpu, requested: requests.nvidia.com/gpu=2'
    r = classify(None, present=False, rejection=Rejection(403, msg, T))
    assert r.outcome is O.REJECTED and "exceeded quota" in r.message


def test_a_running_pod_at_its_deadline_is_pending():
    assert classify(pod("Running"), present=True).outcome is O.PENDING


def test_pod_statements_ignore_a_disruption_condition_that_is_not_true():
    cond = {"type": "DisruptionTarget", "status": "False", "reason": "PreemptionByScheduler"}
    assert pod_statements(pod(conditions=[cond])) == []


def test_preemptor_reads_a_pod_name_or_a_known_uid_or_keeps_the_uid():
    assert preemptor("pod team-a/p was preempted by pod team-b/h-1") == "team-b/h-1"
    assert preemptor(f"Preempted by pod {UID} on node n", {UID: "team-b/x"}) == "team-b/x"
    assert preemptor(f"Preempted by pod {UID} on node n") == f"uid {UID}"
    assert preemptor("no one") is None
    kai = f"Pod team-a/p was preempted by higher priority workload team-b/pg-h-1-{UID}"
    assert preemptor(kai, {UID: "team-b/h-1"}) == "team-b/h-1", "KAI's pod group carries the pod's uid"


def test_only_preempted_and_evicted_are_resubmitted():
    assert {o for o in O if o.resubmittable} == {O.PREEMPTED, O.EVICTED}


def test_a_failed_scheduling_note_that_the_pod_could_not_preempt_is_not_a_preemption():
    msg = ("0/5 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: not eligible due to "
           "preemptionPolicy=Never..")
    events = event_statements([ev("FailedScheduling", msg)], "team-a", "p")
    assert classify(pod(), present=False, events=events).outcome is O.LOST
    later = event_statements([ev("FailedScheduling", msg), ev("Preempted", "Preempted by pod x on node n",
                                                               at="2026-11-30T09:01:00Z")], "team-a", "p")
    r = classify(pod(), present=False, events=later)
    assert r.outcome is O.PREEMPTED and r.reason == "Preempted"


def test_a_reclaim_kai_records_on_the_victims_podgroup_explains_the_vanished_pod():
    e = {"metadata": {"namespace": "team-a"}, "involvedObject": {"kind": "PodGroup", "name": "pg-p"},
         "reason": "Evict", "message": "Pod team-a/p was preempted by workload team-b/pg-q.",
         "lastTimestamp": "2026-11-30T09:00:20Z"}
    other = {**e, "message": "Pod team-a/p2 was preempted by workload team-b/pg-q."}
    said = group_event_statements([e, other], "team-a", "p")
    assert [s.message for s in said] == [e["message"]]
    out = classify(None, present=False, owner=said)
    assert out.outcome is O.PREEMPTED and out.by == "team-b/pg-q"


def test_named_pod_reads_the_pod_a_podgroup_event_begins_with_and_ignores_other_objects():
    e = {"involvedObject": {"kind": "PodGroup", "name": "pg-p"}, "message": "Pod team-a/p-0 was preempted by x."}
    assert named_pod(e) == ("team-a", "p-0")
    assert named_pod({**e, "involvedObject": {"kind": "Pod", "name": "p-0"}}) is None
    assert named_pod({**e, "message": "PodGroup is not ready"}) is None


def test_a_pod_the_scheduler_deleted_whose_container_then_stopped_was_preempted_not_failed():
    """The kubelet stops a deleted pod's container (SIGTERM, 143) and the pod turns Failed; with the platform's
    event lost, the delete before its end says why. ``finishedAt`` has whole seconds: a delete in its second counts."""
    killed = pod("Failed", exit_code=143, reason="Error", deleting=True)  # finishedAt 09:01:00
    scheduler = "system:serviceaccount:volcano-system:volcano-scheduler"
    same_second = Deletion(scheduler, datetime(2026, 11, 30, 9, 1, 0, 790000, tzinfo=timezone.utc))
    rec = classify(killed, present=True, deletions=[same_second])
    assert (rec.outcome, rec.by, rec.source) == (O.PREEMPTED, scheduler, "audit log")
    assert classify(killed, present=False, deletions=[same_second]).outcome is O.PREEMPTED


def test_a_pod_that_failed_on_its_own_and_was_deleted_afterwards_failed():
    failed = pod("Failed", exit_code=1, reason="Error")  # finishedAt 09:01:00
    cleanup = Deletion("system:serviceaccount:airflow:gpupoc", datetime(2026, 11, 30, 9, 1, 2, tzinfo=timezone.utc))
    rec = classify(failed, present=False, deletions=[cleanup])
    assert (rec.outcome, rec.message) == (O.FAILED, "exit code 1")
