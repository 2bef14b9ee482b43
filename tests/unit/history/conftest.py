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


# The tenant quotas these tests were written against (the default plan's may change with its waves).
QUOTAS = {"team-vision": 16, "team-nlp": 12, "team-serving": 8}


@pytest.fixture(scope="session")
def plan(tmp_path_factory):
    """The default plan with fixed tenant GPU quotas (16, 12, 8), written beside a copy so paths resolve."""
    import yaml

    data = yaml.safe_load(DEFAULT_PLAN.read_text(encoding="utf-8"))
    for t in data["tenants"]:
        t["quota"]["gpus"] = QUOTAS[t["name"]]
    for entry in data["test_classes"]["queue_congestion"]["wave"]:  # keep the wave within those quotas
        entry["count"] = 1
    data["platform"]["kubeconfig"] = str(DEFAULT_PLAN.parent / data["platform"]["kubeconfig"])
    data["evidence_root"] = str(DEFAULT_PLAN.parent / data["evidence_root"])
    for key in ("audit_log_path",):
        if data["evidence_sources"].get(key):
            data["evidence_sources"][key] = str(DEFAULT_PLAN.parent / data["evidence_sources"][key])
    path = tmp_path_factory.mktemp("plan") / "plan.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_plan(path)


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
