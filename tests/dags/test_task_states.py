"""The observer's view of the wave tasks: an item's task still on it, or ended, from Airflow's task states."""

from __future__ import annotations

from types import SimpleNamespace

import airflow.sdk

from gpupoc.dags.task_states import wave_task_states
from gpupoc.pipeline.open_items import TaskState


class Ti(SimpleNamespace):
    def get_task_states(self, dag_id, task_ids, run_ids):
        assert (dag_id, task_ids, run_ids) == ("poc_queue_congestion", ["wave"], ["r1"])
        if self.states is None:
            raise RuntimeError("execution API unreachable")
        return {"r1": self.states}


def states_with(monkeypatch, states):
    ti = Ti(dag_id="poc_queue_congestion", run_id="r1", states=states)
    monkeypatch.setattr(airflow.sdk, "get_current_context", lambda: {"ti": ti})
    return wave_task_states(["a", "b", "c", "d"])()


def test_each_item_is_its_mapped_tasks_state_in_map_index_order(monkeypatch):
    got = states_with(monkeypatch, {"wave_0": "success", "wave_1": "up_for_retry", "wave_2": "failed"})
    assert got == {"a": TaskState.ENDED, "b": TaskState.ACTIVE, "c": TaskState.ENDED, "d": TaskState.ACTIVE}


def test_airflow_unable_to_say_leaves_the_observer_to_the_recorded_decisions(monkeypatch):
    assert states_with(monkeypatch, None) is None


def test_a_wave_that_never_expanded_because_its_upstream_failed_ends_every_item(monkeypatch):
    got = states_with(monkeypatch, {"wave": "upstream_failed"})
    assert set(got.values()) == {TaskState.ENDED}


def test_a_wave_not_yet_expanded_leaves_every_item_active(monkeypatch):
    got = states_with(monkeypatch, {"wave": None})
    assert set(got.values()) == {TaskState.ACTIVE}
