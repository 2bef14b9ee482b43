"""What every DAG's tasks share: the plan's location, the wave's small per-task arguments, the cluster pool.

Kept free of Airflow and Kubernetes imports so DAG files can import it at parse time cheaply.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

PLAN_ENV = "GPUPOC_PLAN"
# Pool of one slot (include_deferred) that serialises the GPU-holding part of the test classes.
CLUSTER_POOL = "gpupoc_cluster"


def repo_root() -> Path:
    return Path(__file__).resolve().parents[3]


def default_plan_path() -> Path:
    """``$GPUPOC_PLAN``, else ``plans/default.yaml`` of the repository (relative paths: against the repo)."""
    raw = os.environ.get(PLAN_ENV) or "plans/default.yaml"
    p = Path(os.path.expandvars(os.path.expanduser(raw)))
    return p if p.is_absolute() else repo_root() / p


def plan_path(value: str | None) -> Path:
    """The plan a run uses: the trigger form's ``plan`` parameter when set, else the default."""
    if not value:
        return default_plan_path()
    p = Path(os.path.expandvars(os.path.expanduser(value)))
    return p if p.is_absolute() else repo_root() / p


def cluster_pool(gpu_group: str) -> str:
    """The 1-slot pool of a GPU group: classes of the same group never hold GPUs at the same time."""
    return CLUSTER_POOL if gpu_group in ("", "gpus") else f"{CLUSTER_POOL}_{gpu_group.replace('-', '_')}"


@dataclass(frozen=True)
class WaveTask:
    """The small per-task arguments a mapped pod task expands over (never the whole catalogue)."""

    workload_key: str
    name: str
    namespace: str
    cluster_context: str

    def to_dict(self) -> dict:
        return asdict(self)
