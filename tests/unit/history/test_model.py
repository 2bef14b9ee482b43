"""State normalisation across schedulers, and the job record's derived values."""

from __future__ import annotations

import pytest

from gpupoc.history.model import JobState, normalise_state

from .conftest import job


@pytest.mark.parametrize("raw, state", [
    ("COMPLETED", JobState.COMPLETED), ("Succeeded", JobState.COMPLETED),
    ("FAILED", JobState.FAILED), ("OUT_OF_MEMORY", JobState.FAILED), ("OOMKilled", JobState.FAILED),
    ("CANCELLED by 1234", JobState.CANCELLED), ("Aborted", JobState.CANCELLED), ("canceled", JobState.CANCELLED),
    ("TIMEOUT", JobState.TIMEOUT), ("DeadlineExceeded", JobState.TIMEOUT),
    ("NODE_FAIL", JobState.NODE_FAIL),
    ("PREEMPTED", JobState.OTHER), ("RUNNING", JobState.OTHER), ("", JobState.OTHER),
])
def test_source_states_map_to_the_normalised_state(raw, state):
    assert normalise_state(raw) is state


def test_gpu_seconds_are_gpus_times_run_time_and_zero_without_one():
    assert job(gpus=8, run=100.0).gpu_seconds == 800.0
    assert job(started=False).gpu_seconds == 0.0


def test_group_falls_back_to_none_when_the_source_has_no_vc():
    assert job(user="u7").group("user") == "u7" and job().group("vc") == "(none)"
