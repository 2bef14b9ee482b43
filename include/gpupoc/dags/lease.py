"""The GPU lease: a test class holds the GPUs of its group from before its wave exists until cleanup.

``GpuLeaseOperator`` runs in the group's pool of ONE slot with ``include_deferred``: it records that it
holds the lease, then defers (holding the pool slot, but no worker) until the run's ``cleanup`` writes its
done marker. Gated pods count against ResourceQuota when they are created, so the wave of one class must not
even be submitted while another class runs: ``prepare_wave`` waits for the lease (``MarkerFileSensor``).

Waiting is deferral, not rescheduling: a deferred sensor holds no worker and its trigger ends the task in the
triggerer, while rescheduling sensors were seen killed under load as their worker was reclaimed between pokes.
"""

from __future__ import annotations

import asyncio
import os
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any, AsyncIterator

from airflow.sdk import BaseOperator
from airflow.triggers.base import (
    BaseTrigger,
    TaskFailedEvent,
    TaskSuccessEvent,
    TriggerEvent,
)

from gpupoc.steps.markers import DONE_FILE, LEASE_FILE, RELEASE_FILE

if TYPE_CHECKING:
    from airflow.sdk import Context

    from gpupoc.steps.context import RunContext

# What a sensor waiting for each marker waits for, in the words of the demo's progress line.
MARKER_WAITS = {LEASE_FILE: "the GPU lease (another test class may hold the GPUs)",
                RELEASE_FILE: "the wave's release (every pod created, the observer ready)"}


# how often the triggerer looks for the run's cleanup marker: the lease ends (the next class takes the cluster, the
# run ends) at most this long after cleanup; one file lookup each time
LEASE_END_POLL_SECONDS = 0.1


class MarkerFileTrigger(BaseTrigger):
    """Fires once ``path`` exists (status ``done``) or after ``timeout_seconds`` (status ``timeout``).

    With ``end_task`` the event ends the task in the triggerer (no resume on a worker): a resumed task
    would need its pool slot again and would wait behind the next class's lease. With ``timeout_fails`` too,
    a timeout ends the task failed instead.
    """

    def __init__(self, path: str, poll_seconds: float = 2.0, timeout_seconds: float = 7200.0,
                 end_task: bool = False, timeout_fails: bool = False, wait_note: str = ""):
        super().__init__()
        self.path = path
        self.poll_seconds = poll_seconds
        self.timeout_seconds = timeout_seconds
        self.end_task = end_task
        self.timeout_fails = timeout_fails
        self.wait_note = wait_note  # the task's wait note (gpupoc.pipeline.waits), removed when the wait ends

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return ("gpupoc.dags.lease.MarkerFileTrigger",
                {"path": self.path, "poll_seconds": self.poll_seconds, "timeout_seconds": self.timeout_seconds,
                 "end_task": self.end_task, "timeout_fails": self.timeout_fails, "wait_note": self.wait_note})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        deadline = time.monotonic() + self.timeout_seconds
        while True:
            status = "done" if os.path.exists(self.path) else ("timeout" if time.monotonic() >= deadline else "")
            if status:
                if self.wait_note:
                    try:
                        os.unlink(self.wait_note)
                    except OSError:
                        pass
                if self.end_task and status == "timeout" and self.timeout_fails:
                    yield TaskFailedEvent()
                elif self.end_task:
                    yield TaskSuccessEvent(xcoms={"lease_status": status})
                else:
                    yield TriggerEvent({"status": status, "path": self.path})
                return
            await asyncio.sleep(self.poll_seconds)


def appeared(path, within_s: float, step_s: float = 0.1) -> bool:
    """``path`` exists now or within ``within_s`` seconds (looked at every ``step_s``)."""
    deadline = time.monotonic() + within_s
    while not os.path.isfile(path):
        if time.monotonic() >= deadline:
            return False
        time.sleep(step_s)
    return True


class GpuLeaseOperator(BaseOperator):
    """Holds the group's pool slot (deferred) from the start of a class's wave until its cleanup."""

    template_fields = ("plan_path",)
    ui_color = "#f4d03f"

    def __init__(self, *, plan_path: str, test_class: str, max_hold_seconds: float = 3 * 3600, **kwargs: Any):
        super().__init__(**kwargs)
        self.plan_path = plan_path
        self.test_class = test_class
        self.max_hold_seconds = max_hold_seconds

    def _ctx(self, context: Context) -> RunContext:
        from gpupoc.steps.context import run_context

        return run_context(self.plan_path, context["dag"].dag_id, context["run_id"], self.test_class)

    def execute(self, context):
        from gpupoc.common.timefmt import rfc3339, utcnow

        ctx = self._ctx(context)
        done = ctx.files(DONE_FILE)
        ctx.writer.write_json(LEASE_FILE, {"acquired_at": rfc3339(utcnow()), "pool": self.pool})
        if done.exists():
            return {"status": "done"}
        self.defer(trigger=MarkerFileTrigger(str(done), LEASE_END_POLL_SECONDS, self.max_hold_seconds, end_task=True),
                   method_name="execute_complete",
                   timeout=timedelta(seconds=self.max_hold_seconds + 60))

    def execute_complete(self, context, event: dict | None = None):
        """Only reached if a trigger without ``end_task`` resumes the task."""
        from gpupoc.common.timefmt import rfc3339, utcnow

        ctx = self._ctx(context)
        lease = ctx.read_file(LEASE_FILE, {}) or {}
        lease.update(released_at=rfc3339(utcnow()), status=(event or {}).get("status"))
        ctx.writer.write_json(LEASE_FILE, lease)
        if (event or {}).get("status") == "timeout":
            self.log.warning("GPU lease released after %.0f s without the run's cleanup", self.max_hold_seconds)
        return lease


class MarkerFileSensor(BaseOperator):
    """Waits, deferred, until the run's file ``marker`` exists (the lease taken, the wave released).

    The task ends in the triggerer when the file appears and fails after ``timeout_seconds``. With
    ``inline_seconds`` it first looks on its worker for that long (every 0.1 s): a marker that usually comes
    within a second (the lease, taken by ``hold_cluster`` beside it) ends the task there, without the round
    trip through the triggerer (some 2 s); a longer wait is still deferred and holds no worker.
    """

    template_fields = ("plan_path",)
    ui_color = "#d6eaf8"

    def __init__(self, *, plan_path: str, test_class: str, marker: str, poll_seconds: float = 2.0,
                 timeout_seconds: float = 3 * 3600, inline_seconds: float = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.plan_path = plan_path
        self.test_class = test_class
        self.marker = marker
        self.poll_seconds = poll_seconds
        self.timeout_seconds = timeout_seconds
        self.inline_seconds = inline_seconds

    def execute(self, context):
        from gpupoc.pipeline import waits
        from gpupoc.steps.context import run_context

        ctx = run_context(self.plan_path, context["dag"].dag_id, context["run_id"], self.test_class)
        path = ctx.files(self.marker)
        if appeared(path, self.inline_seconds):
            return {"marker": self.marker, "status": "done"}
        self.log.info("waiting (deferred) for %s", path)
        note = waits.write_note(ctx.run_dir, self.task_id, MARKER_WAITS.get(self.marker, self.marker),
                                self.timeout_seconds)
        self.defer(trigger=MarkerFileTrigger(str(path), self.poll_seconds, self.timeout_seconds, end_task=True,
                                             timeout_fails=True, wait_note=str(waits.note_path(ctx.run_dir,
                                                                                                note.task))),
                   method_name="execute_complete", timeout=timedelta(seconds=self.timeout_seconds + 60))

    def execute_complete(self, context, event: dict | None = None):
        """Only reached if the trigger resumes the task instead of ending it."""
        if (event or {}).get("status") != "done":
            from gpupoc.exceptions import GpupocError

            raise GpupocError(f"{self.marker} did not appear within {self.timeout_seconds:.0f} s")
        return {"marker": self.marker, "status": "done"}
