"""The wave's end for every task that waits for it: decided from the attempts' decisions and outcomes, never
from a pod's presence. A vanished pod is lost at once, a refused creation ends its item, a preflight that
refused the class ends every wait at once."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from gpupoc.common.outcomes import WorkloadOutcome as O
from gpupoc.pipeline.attempts import NextAttempt, Submission, TaskDecision
from gpupoc.pipeline.workload_outcome import Rejection
from gpupoc.preflight.model import PreflightReport, failed
from gpupoc.steps.attempt_decision import record_refusal
from gpupoc.steps.markers import OBSERVER_END
from gpupoc.steps.preflight import PREFLIGHT_FILE
from gpupoc.steps.wave_end import WaveEnd, wave_decided

from .conftest import wave_pod

AT = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def wave(ctx, phase="Succeeded", skip=()):
    """Every wave item's pod in ``phase`` (the items in ``skip`` have none), each submission recorded."""
    for i, item in enumerate(ctx.items):
        key = item["workload_key"]
        p = wave_pod(ctx, item, gates=(), created=AT, phase=phase)
        name = p["metadata"]["name"]
        submitted(ctx, key, item["namespace"], name)
        if key not in skip:
            ctx.factory.api.pods[(item["namespace"], name)] = p
    return ctx


def submitted(ctx, item, ns, pod, try_number=1, rejection=None, at=AT + timedelta(seconds=1)):
    ctx.writer.write_json(f"submission-{item}-try{try_number}",
                          Submission(item, ns, pod, at, try_number, rejection).to_dict())


def test_a_pod_still_running_keeps_the_wave_open_and_says_which(make_ctx):
    ctx = wave(make_ctx())
    first = ctx.items[0]
    ctx.factory.api.pods[(first["namespace"], f"{first['workload_key']}-x1")]["status"]["phase"] = "Running"
    end = WaveEnd()
    assert end.over(ctx) is False
    assert [o.item for o in end.open] == [first["workload_key"]]


def test_every_attempt_ended_with_no_further_one_to_come_ends_the_wave(make_ctx):
    ctx = wave(make_ctx())
    end = WaveEnd()
    assert end.over(ctx) is True and end.why == "every wave item has its outcome"


def test_a_pod_that_vanished_without_a_record_is_lost_at_once(make_ctx):
    ctx = make_ctx()
    lost = ctx.items[3]["workload_key"]
    wave(ctx, skip=(lost,))  # submitted and gone: no pod, no event, no delete in the audit log
    assert wave_decided(ctx) is True, "a lost item is decided: no attempt follows a loss"


def test_the_tasks_lost_decision_closes_its_item_even_when_the_plan_would_resubmit(make_ctx):
    ctx = make_ctx()
    item = ctx.items[0]
    wave(ctx, skip=(item["workload_key"],))
    name = f"{item['workload_key']}-x1"
    ctx.writer.write_json(f"decision-{item['workload_key']}-try1", TaskDecision(
        item["workload_key"], item["namespace"], name, 1, O.LOST, "lost (none: vanished)", NextAttempt.NONE,
        AT).to_dict())
    assert WaveEnd().over(ctx) is True


def test_an_item_refused_at_admission_ends_with_its_refusal(make_ctx):
    ctx = make_ctx()
    item = ctx.items[5]
    key = item["workload_key"]
    wave(ctx, skip=(key,))
    rejection = Rejection(403, 'admission webhook "gpu-policy" denied the request: no', AT)
    submitted(ctx, key, item["namespace"], None, rejection=rejection)
    record_refusal(ctx, key, item["namespace"], 1, rejection)
    assert WaveEnd().over(ctx) is True


def test_an_item_whose_pod_nobody_created_nor_refused_keeps_the_wave_open_until_the_observer_ends(make_ctx):
    ctx = make_ctx()
    key = ctx.items[2]["workload_key"]
    wave(ctx, skip=(key,))
    ctx.files(f"submission-{key}-try1").unlink()
    end = WaveEnd()
    assert end.over(ctx) is False and [(o.item, o.waiting_for) for o in end.open] == [
        (key, "its pod to be created")]
    ctx.writer.write_json(OBSERVER_END, {"open_at_deadline": [], "awaited": []})
    assert end.over(ctx) is True and end.why == "the observer ended"


def preempted_and_resubmitted(make_ctx):
    """A wave whose first item's attempt was preempted and its task said it resubmits; a waiter on a fake clock."""
    ctx = make_ctx()
    item = ctx.items[0]
    key, ns = item["workload_key"], item["namespace"]
    wave(ctx, skip=(key,))
    ctx.writer.write_json(f"decision-{key}-try1", TaskDecision(
        key, ns, f"{key}-x1", 1, O.PREEMPTED, "preempted", NextAttempt.RESUBMIT, AT).to_dict())
    clock = Clock()
    return ctx, item, key, ns, clock, WaveEnd(clock=clock)


def test_a_preempted_attempt_the_task_resubmits_is_awaited_until_its_successor_ends(make_ctx):
    ctx, item, key, ns, clock, end = preempted_and_resubmitted(make_ctx)
    assert end.over(ctx) is False and end.open[0].after == f"{key}-x1"
    again = wave_pod(ctx, item, suffix="x2", gates=(), created=AT + timedelta(seconds=10), phase="Running")
    ctx.factory.api.pods[(ns, f"{key}-x2")] = again
    submitted(ctx, key, ns, f"{key}-x2", try_number=2, at=AT + timedelta(seconds=11))
    assert end.over(ctx) is False, "the new attempt runs"
    again["status"]["phase"] = "Succeeded"
    assert end.over(ctx) is True


def test_a_resubmission_that_never_comes_is_awaited_at_most_the_plans_wait(make_ctx):
    ctx, item, key, ns, clock, end = preempted_and_resubmitted(make_ctx)
    assert end.over(ctx) is False
    clock.now = ctx.spec.resubmission.wait_seconds + 1
    assert end.over(ctx) is True


def test_a_class_the_preflight_refused_ends_every_wait_at_once_without_asking_the_cluster(make_ctx):
    ctx = make_ctx()
    ctx.writer.write_json(PREFLIGHT_FILE, PreflightReport(
        "p", [failed("prometheus", "Prometheus", "no answer", "start it")], test_class=ctx.test_class).to_dict())
    end = WaveEnd()
    assert end.over(ctx) is True and "preflight" in end.why
    assert ctx.factory.api.calls == [], "nothing was submitted: nothing to look at"
