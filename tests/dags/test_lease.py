"""The cluster lease's trigger: fires when cleanup's marker appears, or at its timeout."""

from __future__ import annotations

import asyncio

from gpupoc.dags.lease import MarkerFileTrigger


async def first_event(trigger):
    async for ev in trigger.run():
        return ev.payload


def test_the_lease_ends_when_the_done_marker_appears(tmp_path):
    marker = tmp_path / "cluster_done.json"

    async def scenario():
        task = asyncio.create_task(first_event(MarkerFileTrigger(str(marker), poll_seconds=0.05, timeout_seconds=5)))
        await asyncio.sleep(0.2)
        assert not task.done(), "the lease is held while the run has not cleaned up"
        marker.write_text("{}")
        return await asyncio.wait_for(task, 2)

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
