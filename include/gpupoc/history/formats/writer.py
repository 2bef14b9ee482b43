"""Write a history as an Acme or Helios trace CSV, the way those traces write it (what `--format` reads back)."""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

from gpupoc.history.formats import acme, helios
from gpupoc.history.formats.values import parse_zone
from gpupoc.history.model import JobRecord
from gpupoc.history.table import History

WRITERS = {"acme": acme.WRITE_COLUMNS, "helios": helios.WRITE_COLUMNS}


def write_trace_csv(path: str | Path, history: History, fmt: str) -> Path:
    """Acme times carry their offset; Helios times are written without one, in the history's zone."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    zone = parse_zone(history.timezone)
    columns = WRITERS[fmt]
    with open(p, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(columns)
        for r in history.records:
            values = _values(r, lambda dt: _time(dt, zone, with_offset=fmt == "acme"))
            out.writerow([values[c] for c in columns])
    return p


def _values(r: JobRecord, time) -> dict[str, object]:
    return {
        "job_id": r.job_id, "user": r.user or "", "vc": r.vc or "", "node_num": r.node_num, "gpu_num": r.gpu_num,
        "cpu_num": "" if r.cpu_num is None else r.cpu_num, "type": r.type or "", "state": r.state_raw,
        "submit_time": time(r.submit_time), "start_time": time(r.start_time), "end_time": time(r.end_time),
        "duration": _num(r.duration_s), "queue": _num(r.queue_s),
        "gpu_time": _num(r.gpu_num * r.duration_s if r.duration_s is not None else None),
    }


def _time(dt: datetime | None, zone, with_offset: bool) -> str:
    if dt is None:
        return ""
    local = dt.astimezone(zone)
    return (local if with_offset else local.replace(tzinfo=None)).isoformat(sep=" ")


def _num(x: float | None) -> str:
    if x is None:
        return ""
    return str(int(x)) if float(x).is_integer() else str(x)
