"""Every attempt of every wave item, from the pods, the observer's last look and the operator's records."""

from __future__ import annotations

from datetime import timedelta

from gpupoc.common.outcomes import WorkloadOutcome as O
from gpupoc.pipeline.attempts import Evidence, Submission, gather, open_items
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


def test_open_items_wait_for_pending_pods_and_for_a_preempted_items_next_attempt():
    present = {("team-a", "a-1"): ran("a-1", "a", phase="Running"), ("team-a", "b-1"): ran("b-1", "b")}
    items = {"a": "team-a", "b": "team-a", "c": "team-a", "d": "team-a"}
    seen = {"a": ["a-1"], "b": ["b-1"], "d": ["d-1"]}
    last = {("team-a", "d-1"): ran("d-1", "d", phase="Running")}
    events = [{**PREEMPT, "involvedObject": {"name": "d-1", "namespace": "team-a"}}]
    got = {o.item: o.waiting_for for o in open_items(items, seen, present, last, events, {("team-a", "d-1"): 0.0},
                                                      now=10.0, limit=1, wait_s=60)}
    assert set(got) == {"a", "c", "d"} and "preempted" in got["d"]
    later = open_items(items, seen, present, last, events, {("team-a", "d-1"): 0.0}, now=61.0, limit=1, wait_s=60)
    assert "d" not in {o.item for o in later}, "after wait_s the preemption is the item's outcome"


def test_a_probes_pod_is_read_back_but_a_probe_item_never_created_is_not_lost():
    att = gather({"a": "team-a"}, [ran("a-1", "a"), ran("c-1", "consumer")], {}, [], Evidence(),
                 also={"consumer": "team-a", "over-quota": "team-a"})
    assert sorted(a.item for a in att) == ["a", "consumer"]
    assert all(a.outcome.outcome is O.SUCCEEDED for a in att)
