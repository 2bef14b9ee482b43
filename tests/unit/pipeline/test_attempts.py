"""Every attempt of every wave item, from the pods, the observer's last look and the operator's records."""

from __future__ import annotations

from datetime import timedelta

from gpupoc.common.outcomes import WorkloadOutcome as O
from gpupoc.pipeline.attempts import (Evidence, NextAttempt, Submission, TaskDecision, classify_attempt, gather,
                                      next_attempt)
from gpupoc.pipeline.workload_outcome import Deletion, Rejection

from .fake_api import T0, pod

PREEMPT = {"metadata": {"namespace": "team-a"}, "involvedObject": {"name": "a-1", "namespace": "team-a"},
           "reason": "Preempted", "message": "Preempted by pod u-2 on node training-node-1",
           "lastTimestamp": "2026-11-30T09:00:20Z"}


def ran(name, item, created=0, phase="Succeeded", owner=None):
    p = pod(name, "team-a", item, gates=(), created=T0 + timedelta(seconds=created), phase=phase)
    p["metadata"]["uid"] = f"u-{name}"
    if owner:
        p["metadata"]["ownerReferences"] = [{"kind": owner, "name": "job", "controller": True}]
    return p


def by(attempts, item):
    return [a for a in attempts if a.item == item]


def test_a_preempted_attempt_and_its_resubmission_are_two_attempts_the_last_one_final():
    last_seen = {("team-a", "a-1"): ran("a-1", "a", phase="Running")}
    subs = [Submission("a", "team-a", "a-1", T0), Submission("a", "team-a", "a-2", T0 + timedelta(seconds=30), 2)]
    att = gather({"a": "team-a"}, [ran("a-2", "a", created=30)], last_seen, subs, Evidence(events=[PREEMPT]))
    first, second = by(att, "a")
    assert (first.number, first.outcome.outcome, first.final) == (1, O.PREEMPTED, False)
    assert (second.number, second.outcome.outcome, second.final) == (2, O.SUCCEEDED, True)
    assert first.requeued_by_platform is False and second.submitted_by == "pipeline"


def test_a_replacement_the_platform_created_counts_as_its_requeue():
    last_seen = {("team-a", "a-1"): ran("a-1", "a", phase="Running")}
    att = gather({"a": "team-a"}, [ran("a-1-r1", "a", created=25, owner="Job")], last_seen,
                 [Submission("a", "team-a", "a-1", T0)], Evidence(events=[PREEMPT]))
    first, second = by(att, "a")
    assert first.requeued_by_platform is True and second.submitted_by == "platform"


def test_a_pod_only_the_operator_recorded_still_gets_its_outcome_from_the_audit_log():
    ev = Evidence(deletions={("team-a", "a-1"): [Deletion("system:serviceaccount:team-b:runner", T0)]})
    att = gather({"a": "team-a"}, [], {}, [Submission("a", "team-a", "a-1", T0)], ev)
    assert att[0].outcome.outcome is O.DELETED and att[0].outcome.by.endswith("team-b:runner")


def test_a_refused_creation_is_a_rejected_attempt():
    rej = Rejection(403, "exceeded quota: team-a-gpu", T0)
    att = gather({"a": "team-a"}, [], {}, [Submission("a", "team-a", None, T0, 1, rej)], Evidence())
    assert [a.outcome.outcome for a in att] == [O.REJECTED]


def test_an_item_nothing_was_seen_or_recorded_of_is_lost_and_says_where_to_look():
    att = gather({"a": "team-a", "b": "team-a"}, [ran("a-1", "a")], {}, [], Evidence())
    b = by(att, "b")[0]
    assert b.outcome.outcome is O.LOST and "task's log" in b.outcome.message and b.final


def test_a_recorded_pod_that_vanished_without_a_trace_is_lost():
    att = gather({"a": "team-a"}, [], {("team-a", "a-1"): ran("a-1", "a", phase="Running")}, [], Evidence())
    assert att[0].outcome.outcome is O.LOST


def test_pods_of_other_items_or_runs_are_ignored():
    att = gather({"a": "team-a"}, [ran("a-1", "a"), ran("z-1", "z")], {}, [], Evidence())
    assert [a.pod_name for a in att] == ["a-1"]


def test_a_probes_pod_is_read_back_but_a_probe_item_never_created_is_not_lost():
    att = gather({"a": "team-a"}, [ran("a-1", "a"), ran("c-1", "consumer")], {}, [], Evidence(),
                 also={"consumer": "team-a", "over-quota": "team-a"})
    assert sorted(a.item for a in att) == ["a", "consumer"]
    assert all(a.outcome.outcome is O.SUCCEEDED for a in att)


def test_an_attempt_has_one_outcome_from_every_record_whoever_asks():
    """The task, the observer and the evidence classify with the same function: a pod gone with no event
    (events dropped) is preempted when the audit log has the scheduler's delete, lost only when nothing says."""
    key = ("team-a", "a-1")
    gone = ran("a-1", "a", phase="Running")
    audited = Evidence(deletions={key: [Deletion("system:kube-scheduler", T0)]})
    assert classify_attempt(key, gone, False, audited).outcome is O.PREEMPTED
    assert classify_attempt(key, gone, False, Evidence()).outcome is O.LOST
    [a] = gather({"a": "team-a"}, [], {key: gone}, [Submission("a", "team-a", "a-1", T0)], audited)
    assert a.outcome == classify_attempt(key, gone, False, audited)
    disrupted = {**gone, "status": {**gone["status"], "conditions": [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "message": "x"}]}}
    assert classify_attempt(key, disrupted, False, Evidence()).outcome is O.PREEMPTED


def test_another_attempt_follows_a_preemption_or_eviction_while_the_limit_allows():
    assert next_attempt(O.PREEMPTED, 1, 2, False) is NextAttempt.RESUBMIT
    assert next_attempt(O.EVICTED, 2, 2, False) is NextAttempt.RESUBMIT
    assert next_attempt(O.PREEMPTED, 3, 2, False) is NextAttempt.NONE
    assert next_attempt(O.PREEMPTED, 3, 2, True) is NextAttempt.PLATFORM
    for final in (O.SUCCEEDED, O.FAILED, O.LOST, O.REJECTED, O.DELETED):
        assert next_attempt(final, 1, 2, False) is NextAttempt.NONE


def test_a_task_decision_survives_its_file():
    d = TaskDecision("a", "team-a", "a-1", 2, O.PREEMPTED, "preempted by system:kube-scheduler (audit log)",
                     NextAttempt.RESUBMIT, T0)
    assert TaskDecision.from_dict(d.to_dict()) == d
