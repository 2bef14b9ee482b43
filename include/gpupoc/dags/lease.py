"""The cluster lease: a test class holds the GPUs of its group from before its wave exists until cleanup.

``ClusterLeaseOperator`` runs in the group's pool of ONE slot with ``include_deferred``: it records that it
holds the lease, then defers (holding the pool slot, but no worker) until the run's ``cleanup`` writes its
done marker. Gated pods count against ResourceQuota when they are created, so the wave of one class must not
even be submitted while another class runs: ``prepare_wave`` waits for the lease (a rescheduling sensor).
"""

from __future__ import annotations

import asyncio
import os
import time
from datetime import timedelta
from typing import Any, AsyncIterator

from airflow.sdk import BaseOperator
from airflow.triggers.base import BaseTrigger, TaskSuccessEvent, TriggerEvent

LEASE_FILE = "lease"
DONE_FILE = "cluster_done"
STALE_MARKERS = (LEASE_FILE, DONE_FILE, "release")


class MarkerFileTrigger(BaseTrigger):
    """Fires once ``path`` exists (status ``done``) or after ``timeout_seconds`` (status ``timeout``).

    With ``end_task`` the event ends the task in the triggerer (no resume on a worker): a resumed task
    would need its pool slot again and would wait behind the next class's lease.
    """

    def __init__(self, path: str, poll_seconds: float = 2.0, timeout_seconds: float = 7200.0,
                 end_task: bool = False):
        super().__init__()
        self.path = path
        self.poll_seconds = poll_seconds
        self.timeout_seconds = timeout_seconds
        self.end_task = end_task

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return ("gpupoc.dags.lease.MarkerFileTrigger",
                {"path": self.path, "poll_seconds": self.poll_seconds, "timeout_seconds": self.timeout_seconds,
                 "end_task": self.end_task})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        deadline = time.monotonic() + self.timeout_seconds
        while True:
            status = "done" if os.path.exists(self.path) else ("timeout" if time.monotonic() >= deadline else "")
            if status:
                if self.end_task:
                    yield TaskSuccessEvent(xcoms={"lease_status": status})
                else:
                    yield TriggerEvent({"status": status, "path": self.path})
                return
            await asyncio.sleep(self.poll_seconds)


class ClusterLeaseOperator(BaseOperator):
    """Holds the group's pool slot (deferred) from the start of a class's wave until its cleanup."""

    template_fields = ("plan_path",)
    ui_color = "#f4d03f"

    def __init__(self, *, plan_path: str, test_class: str, max_hold_seconds: float = 3 * 3600, **kwargs: Any):
        super().__init__(**kwargs)
        self.plan_path = plan_path
        self.test_class = test_class
        self.max_hold_seconds = max_hold_seconds

    def _ctx(self, context):
        from gpupoc.dags.steps import RunContext
        from gpupoc.pipeline.common import plan_path

        return RunContext(str(plan_path(self.plan_path)), context["dag"].dag_id, context["run_id"], self.test_class)

    def execute(self, context):
        from gpupoc.dags.steps import utcnow
        from gpupoc.pipeline.common import rfc3339

        ctx = self._ctx(context)
        done = ctx.files(DONE_FILE)
        ctx.writer.write_json(LEASE_FILE, {"acquired_at": rfc3339(utcnow()), "pool": self.pool})
        if done.exists():
            return {"status": "done"}
        self.defer(trigger=MarkerFileTrigger(str(done), 2.0, self.max_hold_seconds, end_task=True),
                   method_name="execute_complete",
                   timeout=timedelta(seconds=self.max_hold_seconds + 60))

    def execute_complete(self, context, event: dict | None = None):
        """Only reached if a trigger without ``end_task`` resumes the task."""
        from gpupoc.dags.steps import utcnow
        from gpupoc.pipeline.common import rfc3339

        ctx = self._ctx(context)
        lease = ctx.read_file(LEASE_FILE, {}) or {}
        lease.update(released_at=rfc3339(utcnow()), status=(event or {}).get("status"))
        ctx.writer.write_json(LEASE_FILE, lease)
        if (event or {}).get("status") == "timeout":
            self.log.warning("cluster lease released after %.0f s without the run's cleanup", self.max_hold_seconds)
        return lease
