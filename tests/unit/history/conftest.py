"""Fixtures: the history fixtures under data/, the default plan, and a small job factory."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from gpupoc.history.cluster import ClusterShape
from gpupoc.history.model import JobRecord, JobState
from gpupoc.plan import DEFAULT_PLAN, load_plan

DATA = Path(__file__).parent / "data"
T0 = datetime(2024, 3, 1, tzinfo=timezone.utc)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def plan():
    return load_plan(DEFAULT_PLAN)


@pytest.fixture(scope="session")
def cluster(plan) -> ClusterShape:
    return ClusterShape.from_plan(plan)


def job(job_id: str = "j1", *, at: float = 0.0, gpus: int = 1, nodes: int = 1, run: float | None = 100.0,
        wait: float = 10.0, state: JobState = JobState.COMPLETED, user: str = "u1", vc: str | None = None,
        exit_code: int | None = None, started: bool = True, row: int = 2, type: str | None = None) -> JobRecord:
    """A job submitted ``at`` seconds after T0 that waited ``wait`` and ran ``run`` seconds."""
    submit = T0 + timedelta(seconds=at)
    start = submit + timedelta(seconds=wait) if started else None
    end = start + timedelta(seconds=run) if start is not None and run is not None else None
    return JobRecord(job_id=job_id, submit_time=submit, gpu_num=gpus, state=state, state_raw=state.value.upper(),
                     source_row=row, node_num=nodes, user=user, vc=vc, exit_code=exit_code, start_time=start,
                     end_time=end, duration_s=run if started else None, queue_s=wait if started else None, type=type)
