"""Which wave items are still open: an ended attempt is awaited only while another one is to come."""

from __future__ import annotations

from gpupoc.common.outcomes import WorkloadOutcome as O
from gpupoc.pipeline.attempts import NextAttempt, TaskDecision
from gpupoc.pipeline.open_items import Policy, TaskState, TaskView, open_items
from gpupoc.pipeline.workload_outcome import OutcomeRecord

from .fake_api import T0, pod

POLICY = Policy(limit=1, wait_s=60)
ITEMS = {"a": "team-a"}
KEY = ("team-a", "a-1")


def outcome(kind: O):
    return lambda key: OutcomeRecord(kind)


def preempted_then(tasks: TaskView, now: float = 10.0, kind: O = O.PREEMPTED, seen=("a-1",)):
    """Item a's pod a-1 ended (gone) at 0 s; what is open at ``now``."""
    return open_items(ITEMS, {"a": list(seen)}, {}, {KEY: 0.0}, now, POLICY, tasks, outcome(kind))


def decision(nxt: NextAttempt, kind: O = O.PREEMPTED, pod_name: str | None = "a-1") -> TaskDecision:
    return TaskDecision("a", "team-a", pod_name, 1, kind, kind.value, nxt, T0)


def test_a_running_or_waiting_pod_keeps_its_item_open_and_an_item_without_pods_waits_for_one():
    running = pod("a-1", "team-a", "a", gates=(), phase="Running")
    [o] = open_items(ITEMS, {"a": ["a-1"]}, {KEY: running}, {}, 0.0, POLICY, TaskView(), outcome(O.PENDING))
    assert o.waiting_for == "a-1 (Running)" and o.after is None
    [o] = open_items(ITEMS, {}, {}, {}, 0.0, POLICY, TaskView(), outcome(O.PENDING))
    assert "created" in o.waiting_for


def test_before_the_task_speaks_the_attempts_own_outcome_decides_for_at_most_wait_s():
    [o] = preempted_then(TaskView())
    assert o.after == "a-1" and "preempted" in o.waiting_for
    assert preempted_then(TaskView(), now=61.0) == []
    assert preempted_then(TaskView(), kind=O.SUCCEEDED) == [] and preempted_then(TaskView(), kind=O.LOST) == []


def test_an_attempt_beyond_the_limit_is_not_awaited():
    tries = open_items(ITEMS, {"a": ["a-0", "a-1"]}, {}, {KEY: 0.0}, 10.0, POLICY, TaskView(), outcome(O.PREEMPTED))
    assert tries == [], "two tries with resubmission.limit 1: no third"


def test_the_tasks_recorded_decision_rules_over_the_observers_reading():
    no_more = TaskView(decisions={KEY: decision(NextAttempt.NONE)})
    assert preempted_then(no_more) == [], "the task said no attempt follows"
    again = TaskView(decisions={KEY: decision(NextAttempt.RESUBMIT)})
    assert [o.item for o in preempted_then(again, kind=O.LOST)] == ["a"], "the task resubmits: await it"


def test_where_task_states_are_known_an_ended_task_closes_its_item_and_an_active_one_is_awaited():
    assert preempted_then(TaskView(states={"a": TaskState.ENDED})) == []
    [o] = preempted_then(TaskView(states={"a": TaskState.ACTIVE}), now=600.0)
    assert "its task retries" in o.waiting_for, "a retry on its way is awaited past wait_s"
    assert preempted_then(TaskView(states={"a": TaskState.ACTIVE}), kind=O.SUCCEEDED) == []
    assert open_items(ITEMS, {}, {}, {}, 0.0, POLICY, TaskView(states={"a": TaskState.ENDED}), outcome(O.LOST)) == []


def test_a_refused_creation_closes_its_item():
    refused = TaskView(refused={"a": decision(NextAttempt.NONE, O.REJECTED, None)})
    assert open_items(ITEMS, {}, {}, {}, 0.0, POLICY, refused, outcome(O.LOST)) == []


def test_a_terminating_or_failed_pod_counts_as_ended():
    terminating = pod("a-1", "team-a", "a", gates=(), phase="Running")
    terminating["metadata"]["deletionTimestamp"] = "2026-11-30T09:00:30Z"
    [o] = open_items(ITEMS, {"a": ["a-1"]}, {KEY: terminating}, {KEY: 0.0}, 1.0, POLICY, TaskView(),
                     outcome(O.PREEMPTED))
    assert o.after == "a-1"
    failed = pod("a-1", "team-a", "a", gates=(), phase="Failed")
    assert open_items(ITEMS, {"a": ["a-1"]}, {KEY: failed}, {KEY: 0.0}, 1.0, POLICY, TaskView(),
                      outcome(O.FAILED)) == []
