"""The wave's pod trigger keeps the pod when the triggerer cancels it only because it moved elsewhere."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone

from gpupoc.dags.operator import WavePodTrigger


class _Hook:
    """Records the deletions the trigger asks for (the pod itself is not the point here)."""

    def __init__(self) -> None:
        self.deleted: list[tuple[str, str]] = []

    async def delete_pod(self, name: str, namespace: str, grace_period_seconds=None) -> None:
        self.deleted.append((namespace, name))


def _cancelled(task_state_known: bool, still_deferred: bool) -> list[tuple[str, str]]:
    trigger = WavePodTrigger(pod_name="qc-1", pod_namespace="team-a", base_container_name="base",
                             trigger_start_time=datetime(2026, 12, 1, tzinfo=timezone.utc))
    hook = _Hook()
    trigger.__dict__["hook"] = hook  # the cached property, as the triggerer would have built it

    async def safe_to_cancel() -> bool:
        if not task_state_known:
            raise RuntimeError("no supervisor")
        return not still_deferred

    trigger.safe_to_cancel = safe_to_cancel
    asyncio.run(trigger.on_kill())
    return hook.deleted


def test_a_trigger_moved_to_another_triggerer_keeps_the_pod_its_task_still_waits_for():
    assert _cancelled(task_state_known=True, still_deferred=True) == []


def test_a_users_action_on_the_task_still_deletes_its_pod():
    assert _cancelled(task_state_known=True, still_deferred=False) == [("team-a", "qc-1")]


def test_a_task_state_that_cannot_be_read_keeps_the_pod():
    assert _cancelled(task_state_known=False, still_deferred=False) == []
