"""The files a bulk shard task writes under its run's evidence ``files/``, and reading them back (this module
needs no run context, so the probes and the shard task both read it)."""

from __future__ import annotations

import json
from pathlib import Path

TRANSITIONS_PREFIX = "pod_transitions-shard"  # every watched pod's condition transitions, per shard
OBSERVER_TRANSITIONS = "pod_transitions-observer.json"  # the same, as the observer's watch saw a wave's pods
SHARD_PREFIX = "bulk_shard-"                  # the shard's summary
CREATED_PREFIX = "bulk_created-"              # the shard sent every creation (the release need not wait longer)


def clear_created(files_dir: Path) -> None:
    """Remove every shard's "all created" marker (a cleared run's past try said it, not this one)."""
    for path in files_dir.glob(f"{CREATED_PREFIX}*.json"):
        path.unlink(missing_ok=True)


def still_creating(files_dir: Path, count: int) -> int:
    """How many of the run's ``count`` shards (numbered from 0) have not yet sent every creation of their pods."""
    return sum(not (files_dir / f"{CREATED_PREFIX}{i}.json").is_file() for i in range(count))


def created_pods(files_dir: Path, count: int) -> dict[str, dict] | None:
    """Every pod the run's ``count`` shards created, per item: ``{pod, namespace, created_at}`` as each shard's
    "all created" marker lists them; None unless every shard's marker is there and lists its pods."""
    out: dict[str, dict] = {}
    for i in range(count):
        path = files_dir / f"{CREATED_PREFIX}{i}.json"
        try:
            marker = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(marker.get("pods"), dict):
            return None
        out.update({item: {**p, "namespace": marker["namespace"]} for item, p in marker["pods"].items()})
    return out


def transitions(files_dir: Path) -> list[dict]:
    """Every watched pod's transitions of the run: the bulk shards' watches', else the observer's (empty when
    neither watched: an older run's evidence)."""
    files = sorted(files_dir.glob(f"{TRANSITIONS_PREFIX}*.json")) if files_dir.is_dir() else []
    if not files and (files_dir / OBSERVER_TRANSITIONS).is_file():
        files = [files_dir / OBSERVER_TRANSITIONS]
    return [t for p in files for t in json.loads(p.read_text(encoding="utf-8"))]
