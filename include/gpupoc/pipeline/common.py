"""What every DAG's tasks share: the plan's location, the wave's small per-task arguments, time parsing.

Kept free of Airflow and Kubernetes imports so DAG files can import it at parse time cheaply.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

PLAN_ENV = "GPUPOC_PLAN"
# The scheduling gate the pipeline owns: pods are created held by it, the release task lifts it for all.
PIPELINE_GATE = "gpupoc.io/wave-release"
# Annotation the release task writes on each pod: when its gate was lifted (kept across task reruns).
RELEASED_AT = "gpupoc.io/released-at"
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


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 string (``Z``, offsets, nanoseconds), a datetime or None -> aware UTC datetime or None."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    text = str(value).strip().replace("Z", "+00:00")
    if "." in text:
        head, _, rest = text.partition(".")
        digits = "".join(ch for ch in rest if ch.isdigit())
        tz = rest[len(digits):]
        text = f"{head}.{digits[:6].ljust(6, '0')}{tz}"
    dt = datetime.fromisoformat(text)
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def rfc3339(dt: datetime) -> str:
    """``2026-01-01T00:00:00.123456Z``."""
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
