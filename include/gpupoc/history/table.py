"""The job table on disk: parquet with its metadata, and a ``.meta.json`` beside CSV files.

The parquet schema carries the metadata (JSON under the key ``gpupoc.history``): where the history came
from, its time zone, what was left out and why, and for a synthetic history how it was generated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from gpupoc.exceptions import ConfigError
from gpupoc.history.model import COLUMNS, JobRecord, JobState, SkipReason

META_KEY = b"gpupoc.history"
_TYPES = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(), "float64": pa.float64()}
_ENUMS = {"state": JobState, "skip_reason": SkipReason}


@dataclass
class History:
    """A job history in memory: its jobs (in file order), its time zone and its metadata."""

    records: list[JobRecord]
    timezone: str = "UTC"
    metadata: dict = field(default_factory=dict)


def schema(zone: str) -> pa.Schema:
    """The table's arrow schema; times are timestamps in ``zone`` (an IANA name or an offset like +08:00)."""
    return pa.schema([pa.field(name, pa.timestamp("us", tz=zone) if kind == "timestamp" else _TYPES[kind])
                      for name, (kind, _) in COLUMNS.items()])


def to_arrow(history: History) -> pa.Table:
    target = schema(history.timezone)
    columns = []
    for name in COLUMNS:  # one column at a time: a long history is not held twice as Python lists
        values = [getattr(r, name) for r in history.records]
        if name in _ENUMS:
            values = [v.value if v is not None else None for v in values]
        columns.append(pa.array(values, type=target.field(name).type))
    meta = dict(history.metadata, timezone=history.timezone)
    table = pa.Table.from_arrays(columns, schema=target)
    return table.replace_schema_metadata({META_KEY: json.dumps(meta, sort_keys=True, default=str).encode()})


def from_arrow(table: pa.Table) -> History:
    meta = json.loads((table.schema.metadata or {}).get(META_KEY, b"{}"))
    zone = meta.get("timezone") or table.schema.field("submit_time").type.tz or "UTC"
    names = {f.name for f in fields(JobRecord)}
    records = []
    for row in table.to_pylist():
        kwargs = {k: v for k, v in row.items() if k in names}
        for name, enum in _ENUMS.items():
            if kwargs.get(name) is not None:
                kwargs[name] = enum(kwargs[name])
        records.append(JobRecord(**kwargs))
    return History(records=records, timezone=zone, metadata=meta)


def write_parquet(path: str | Path, history: History) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(to_arrow(history), p, compression="zstd")
    return p


def parquet_zone(path: str | Path) -> str:
    """The time zone of a history table, read from its schema alone."""
    return _checked_schema(Path(path)).field("submit_time").type.tz or "UTC"


def read_parquet(path: str | Path, submitted: tuple[datetime, datetime] | None = None) -> History:
    """The history in ``path``; with ``submitted`` only the jobs submitted in ``[start, end)`` are read."""
    p = Path(path)
    _checked_schema(p)
    filters = [("submit_time", ">=", submitted[0]), ("submit_time", "<", submitted[1])] if submitted else None
    return from_arrow(pq.read_table(p, filters=filters))


def _checked_schema(p: Path) -> pa.Schema:
    if not p.is_file():
        raise ConfigError(str(p), ["(file): job history not found; pass a file written by `gpupoc history import`"])
    found = pq.read_schema(p)
    missing = [c for c in ("job_id", "gpu_num", "state", "submit_time") if c not in found.names]
    if missing:
        raise ConfigError(str(p), [f"(columns): not a job history table, missing {', '.join(missing)}; "
                                   "write it with `gpupoc history import` or `gpupoc history synth`"])
    return found


def sidecar_path(path: str | Path) -> Path:
    """``kalos-300.csv`` -> ``kalos-300.meta.json``."""
    p = Path(path)
    return p.with_name(f"{p.stem}.meta.json")


def read_sidecar(path: str | Path) -> dict | None:
    side = sidecar_path(path)
    return json.loads(side.read_text(encoding="utf-8")) if side.is_file() else None


def write_sidecar(path: str | Path, metadata: dict) -> Path:
    side = sidecar_path(path)
    side.write_text(json.dumps(metadata, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return side
