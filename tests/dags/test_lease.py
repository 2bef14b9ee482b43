"""The GPU lease's trigger: fires when cleanup's marker appears, or at its timeout."""

from __future__ import annotations

import asyncio

from gpupoc.dags.lease import MarkerFileTrigger


async def first_event(trigger):
    async for ev in trigger.run():
        return ev.payload


def test_the_lease_ends_when_the_done_marker_appears(tmp_path):
    marker = tmp_path / "cluster_done.json"

    async def scenario():
        # the timeout is far beyond the test: only the marker can end this lease
        task = asyncio.create_task(first_event(MarkerFileTrigger(str(marker), poll_seconds=0.05,
                                                                 timeout_seconds=3600)))
        await asyncio.sleep(0.2)
        assert not task.done(), "the lease is held while the run has not cleaned up"
        marker.write_text("{}")
        return await task

    assert asyncio.run(scenario())["status"] == "done"


def test_the_lease_ends_at_its_timeout_without_a_marker(tmp_path):
    ev = asyncio.run(first_event(MarkerFileTrigger(str(tmp_path / "never"), poll_seconds=0.05, timeout_seconds=0.2)))
    assert ev["status"] == "timeout"


def test_the_trigger_serializes_to_an_importable_path(tmp_path):
    path, kwargs = MarkerFileTrigger(str(tmp_path / "m"), 2.0, 60, end_task=True).serialize()
    assert path == "gpupoc.dags.lease.MarkerFileTrigger"
    again = MarkerFileTrigger(**kwargs)
    assert again.path == str(tmp_path / "m") and again.end_task is True


def test_the_lease_task_ends_in_the_triggerer_without_needing_its_pool_slot_again(tmp_path):
    from airflow.triggers.base import TaskSuccessEvent

    marker = tmp_path / "done"
    marker.write_text("{}")

    async def one(trigger):
        async for ev in trigger.run():
            return ev

    ev = asyncio.run(one(MarkerFileTrigger(str(marker), 0.05, 5, end_task=True)))
    assert isinstance(ev, TaskSuccessEvent) and ev.xcoms == {"lease_status": "done"}


def test_a_waiting_sensor_fails_at_its_timeout_instead_of_passing(tmp_path):
    from airflow.triggers.base import TaskFailedEvent

    async def one(trigger):
        async for ev in trigger.run():
            return ev

    ev = asyncio.run(one(MarkerFileTrigger(str(tmp_path / "never"), 0.05, 0.2, end_task=True, timeout_fails=True)))
    assert isinstance(ev, TaskFailedEvent)
    kwargs = MarkerFileTrigger(str(tmp_path / "m"), 1, 5, end_task=True, timeout_fails=True).serialize()[1]
    assert kwargs["timeout_fails"] is True


def test_the_marker_sensor_defers_until_its_file_exists_and_returns_at_once_when_it_does(tmp_path):
    from airflow.sdk.exceptions import TaskDeferred

    from gpupoc.dags.lease import MarkerFileSensor
    from gpupoc.steps.context import RunContext

    import pytest
    import yaml

    from gpupoc.pipeline.common import repo_root

    plan = yaml.safe_load((repo_root() / "plans" / "default.yaml").read_text())
    plan["evidence_root"] = str(tmp_path / "evidence")
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(yaml.safe_dump(plan))

    class Dag:
        dag_id = "poc_utilization"

    sensor = MarkerFileSensor(task_id="wave_released", plan_path=str(plan_file), test_class="utilization",
                              marker="release", poll_seconds=0.5, timeout_seconds=30)
    context = {"dag": Dag(), "run_id": "manual__1"}
    with pytest.raises(TaskDeferred) as deferred:
        sensor.execute(context)
    trigger = deferred.value.trigger
    ctx = RunContext(str(plan_file), "poc_utilization", "manual__1", "utilization")
    assert trigger.path == str(ctx.files("release")) and trigger.end_task and trigger.timeout_fails
    ctx.writer.write_json("release", {"found": 1})
    assert sensor.execute(context) == {"marker": "release", "status": "done"}


def test_a_marker_that_comes_while_the_sensor_looks_on_its_worker_ends_it_there_and_one_that_does_not_defers(
        tmp_path):
    import threading

    from gpupoc.dags.lease import appeared

    path = tmp_path / "lease.json"
    assert appeared(path, 0.0) is False and appeared(path, 0.3, step_s=0.05) is False
    writer = threading.Timer(0.2, lambda: path.write_text("{}"))
    writer.start()
    try:
        assert appeared(path, 30.0, step_s=0.05) is True, "written 0.2 s later, looked for up to 30 s"
    finally:
        writer.cancel()
    assert appeared(path, 0.0) is True

