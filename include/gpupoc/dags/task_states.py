"""Where each wave item's Airflow task is, for the observer: still on it (it may submit again) or ended.

Read through the Task SDK (``RuntimeTaskInstance.get_task_states``) from inside the observe task; the mapped
``wave`` task's instance ``wave_<i>`` runs the item at position ``i`` of the wave's items.
"""

from __future__ import annotations

from typing import Callable

from gpupoc.pipeline.open_items import TaskState

WAVE_TASK = "wave"
BULK_TASK = "bulk_shard"
# Airflow task instance states after which no further try runs.
ENDED_STATES = frozenset({"success", "failed", "upstream_failed", "skipped", "removed"})


def wave_task_states(items: list[str]) -> Callable[[], dict[str, TaskState] | None]:
    """A reader of the wave tasks' states by item (``items`` in map-index order); None when Airflow cannot say."""

    def states() -> dict[str, TaskState] | None:
        from airflow.sdk import get_current_context

        ti = get_current_context()["ti"]
        try:
            found = ti.get_task_states(dag_id=ti.dag_id, task_ids=[WAVE_TASK], run_ids=[ti.run_id])
        except Exception:  # noqa: BLE001 - the observer then decides from the tasks' recorded decisions alone
            return None
        return item_states((found or {}).get(ti.run_id) or {}, WAVE_TASK, {item: i for i, item in enumerate(items)})

    return states


def bulk_task_states(shards: list[dict]) -> Callable[[], dict[str, TaskState] | None]:
    """The same by item for a bulk wave: each item is where its shard's task ``bulk_shard_<i>`` is."""
    by_item = {key: i for i, shard in enumerate(shards) for key in shard["items"]}

    def states() -> dict[str, TaskState] | None:
        from airflow.sdk import get_current_context

        ti = get_current_context()["ti"]
        try:
            found = ti.get_task_states(dag_id=ti.dag_id, task_ids=[BULK_TASK], run_ids=[ti.run_id])
        except Exception:  # noqa: BLE001 - the observer then decides from the recorded decisions alone
            return None
        return item_states((found or {}).get(ti.run_id) or {}, BULK_TASK, by_item)

    return states


def item_states(run: dict, task_id: str, index_by_item: dict[str, int]) -> dict[str, TaskState]:
    """Each item's state from the run's task states: its map index's instance, or the task's own unexpanded
    instance when the map never expanded (its upstream failed, e.g. ``prepare_wave``): then every item ended."""
    never_expanded = _state(run.get(task_id)) in ENDED_STATES
    return {item: TaskState.ENDED if never_expanded or _state(run.get(f"{task_id}_{i}")) in ENDED_STATES
            else TaskState.ACTIVE for item, i in index_by_item.items()}


def _state(value) -> str:
    """A task instance state as its plain name (the SDK may give the enum or its value)."""
    return str(getattr(value, "value", value) or "")
