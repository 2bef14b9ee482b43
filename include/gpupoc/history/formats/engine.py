"""Read a delimited job history into JobRecords, one error per bad cell naming the row, the column and the fix.

A format is a list of ``Column``: which file column feeds which JobRecord field, through which parser.
Rows are numbered as the file's lines (the header is row 1), so an editor jumps straight to a bad row.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

from gpupoc.exceptions import ConfigError
from gpupoc.history.formats.values import ValueProblem, offset_label, parse_zone
from gpupoc.history.model import JobRecord, normalise_state

Parser = Callable[[str], object]
# Fields every row must have a value for.
REQUIRED_VALUES = ("job_id", "gpu_num", "state_raw", "submit_time")
TIME_FIELDS = ("submit_time", "start_time", "end_time")
# A run time or wait that differs from what the times say by more than this is worth a note.
_SECONDS_SLACK = 1.0


@dataclass(frozen=True)
class Column:
    """File column ``source`` feeds field ``target`` through ``parse``; ``required``: the header must have it."""

    target: str
    source: str
    parse: Parser
    required: bool = True


@dataclass(frozen=True)
class SourceFormat:
    name: str
    columns: tuple[Column, ...]
    delimiter: str = ","
    header_fix: str = "export the file with its header row"
    # A row that is not a job (a Slurm job step): return why, and it is counted but not read.
    leave_out: Callable[[dict[str, str]], str | None] | None = None


@dataclass(frozen=True)
class RowError:
    row: int
    column: str
    message: str
    fix: str
    job_id: str | None = None

    def __str__(self) -> str:
        job = f" (job {self.job_id})" if self.job_id else ""
        return f"row {self.row}{job}, column {self.column}: {self.message}; {self.fix}"


@dataclass
class ParsedHistory:
    """What a reader made of a file: the good jobs, every bad row's errors, and what it left out and why."""

    source: str
    format: str
    records: list[JobRecord] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)
    left_out: Counter = field(default_factory=Counter)
    notes: Counter = field(default_factory=Counter)
    timezone: str = "UTC"
    timezone_source: str = "--timezone"
    rows_read: int = 0

    @property
    def bad_rows(self) -> int:
        return len({e.row for e in self.errors})


def read_source(path: str | Path, fmt: SourceFormat, zone_name: str = "UTC") -> ParsedHistory:
    """Read ``path`` in format ``fmt``; times without an offset are in ``zone_name``."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(str(p), ["(file): job history not found; pass an existing file"])
    builder = _Builder(fmt, zone_name, ParsedHistory(source=str(p), format=fmt.name))
    with open(p, newline="", encoding="utf-8-sig") as f:
        reader = csv.reader(f, delimiter=fmt.delimiter)
        header = _header(next(reader, None), fmt, p)
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue
            builder.add(reader.line_num, header, cells)
    if not builder.out.rows_read:
        raise ConfigError(str(p), [f"(rows): the header has no rows below it, so there are no jobs to import; "
                                   f"export the history with its jobs (format {fmt.name})"])
    return builder.finish()


def _header(row: list[str] | None, fmt: SourceFormat, path: Path) -> list[str]:
    expected = ", ".join(c.source for c in fmt.columns if c.required)
    if row is None:
        raise ConfigError(str(path), [f"(file): empty; expected a header row with {expected}"])
    header = [h.strip() for h in row]
    while header and not header[-1]:  # `sacct --parsable` ends every line with the delimiter
        header.pop()
    missing = sorted({c.source for c in fmt.columns if c.required and c.source not in header})
    if missing:
        raise ConfigError(str(path), [f"header: missing column(s) {', '.join(missing)} for format {fmt.name} "
                                      f"(found: {', '.join(header) or 'none'}); {fmt.header_fix}"])
    return header


class _Builder:
    def __init__(self, fmt: SourceFormat, zone_name: str, out: ParsedHistory):
        self.fmt = fmt
        self.zone_name = zone_name
        self.zone = parse_zone(zone_name)
        self.out = out
        self.seen: dict[str, int] = {}
        self.naive_rows = 0
        self.offsets: Counter = Counter()  # offset label -> rows with a time at that offset
        self.source_of = {c.target: c.source for c in fmt.columns}

    def add(self, row: int, header: list[str], cells: list[str]) -> None:
        self.out.rows_read += 1
        if len(cells) < len(header) or any(c.strip() for c in cells[len(header):]):
            self.out.errors.append(RowError(row, "(row)", f"{len(cells)} fields, the header has {len(header)}",
                                            f"check the delimiter ({self.fmt.delimiter!r}) and the quoting"))
            return
        values = dict(zip(header, cells))
        if self.fmt.leave_out and (reason := self.fmt.leave_out(values)):
            self.out.left_out[reason] += 1
            return
        parsed, errors = self._cells(row, values)
        job_id = parsed.get("job_id")
        errors += self._checks(row, parsed)
        if job_id is not None:
            self.seen.setdefault(job_id, row)
        if errors:
            self.out.errors += [RowError(e.row, e.column, e.message, e.fix, job_id) for e in errors]
            return
        self.out.records.append(self._record(row, parsed, has_end="end_time" in self.source_of))

    def _cells(self, row: int, values: dict[str, str]) -> tuple[dict, list[RowError]]:
        parsed: dict[str, object] = {}
        errors: list[RowError] = []
        for col in self.fmt.columns:
            if col.source not in values:
                continue
            try:
                parsed[col.target] = col.parse(values[col.source])
            except ValueProblem as p:
                error = RowError(row, col.source, p.message, p.fix)
                if error not in errors:  # two fields read from one column (sacct's AllocTRES) report it once
                    errors.append(error)
        bad = {e.column for e in errors}
        for target in REQUIRED_VALUES:
            source = self.source_of.get(target, target)
            if parsed.get(target) is None and source not in bad:
                errors.append(RowError(row, source, "empty", f"every job needs a {target.replace('_raw', '')}"))
        naive, offsets = False, set()
        for target in TIME_FIELDS:
            dt = parsed.get(target)
            if isinstance(dt, datetime):
                if dt.tzinfo is None:
                    naive = True
                    parsed[target] = dt.replace(tzinfo=self.zone)
                else:
                    offsets.add(offset_label(dt))
        self.naive_rows += naive
        self.offsets.update(offsets)
        return parsed, errors

    def _checks(self, row: int, v: dict) -> list[RowError]:
        errors = []
        job_id, submit, start, end = v.get("job_id"), v.get("submit_time"), v.get("start_time"), v.get("end_time")
        if job_id is not None and job_id in self.seen:
            errors.append(RowError(row, self.source_of["job_id"], f"job id {job_id!r} already at row "
                                   f"{self.seen[job_id]}", "job ids must be unique: remove the duplicate row"))
        if submit and start and start < submit:
            errors.append(RowError(row, self.source_of.get("start_time", "start_time"),
                                   f"start {start.isoformat()} is before submit {submit.isoformat()}",
                                   "fix the start or the submit time"))
        if start and end and end < start:
            errors.append(RowError(row, self.source_of.get("end_time", "end_time"),
                                   f"end {end.isoformat()} is before start {start.isoformat()}",
                                   "fix the end or the start time"))
        gpus, nodes = v.get("gpu_num"), v.get("node_num")
        if gpus and nodes == 0:
            errors.append(RowError(row, self.source_of.get("node_num", "node_num"),
                                   f"0 nodes for {gpus} GPUs", "a GPU job runs on at least 1 node"))
        return errors

    def _record(self, row: int, v: dict, has_end: bool) -> JobRecord:
        duration = self._seconds(v.get("start_time"), v.get("end_time"), v.get("duration_s"), "duration", "end - start")
        if has_end and v.get("start_time") and not v.get("end_time"):
            duration = None  # started, not ended: the run time so far is not a run time
        queue = self._seconds(v.get("submit_time"), v.get("start_time"), v.get("queue_s"), "queue", "start - submit")
        nodes = v.get("node_num")
        if nodes is None:
            self.out.notes["no node count: 1 node per job"] += 1
        raw = str(v["state_raw"])
        return JobRecord(
            job_id=str(v["job_id"]), submit_time=v["submit_time"], gpu_num=int(v["gpu_num"]),
            state=normalise_state(raw), state_raw=raw, source_row=row, node_num=int(nodes if nodes is not None else 1),
            user=v.get("user"), vc=v.get("vc"), partition=v.get("partition"), cpu_num=v.get("cpu_num"),
            type=v.get("type"), exit_code=v.get("exit_code"), start_time=v.get("start_time"),
            end_time=v.get("end_time"), duration_s=duration, queue_s=queue,
        )

    def _seconds(self, a: datetime | None, b: datetime | None, given: float | None, what: str, rule: str):
        if a is None or b is None:
            return given
        measured = (b - a).total_seconds()
        if given is not None and abs(given - measured) > _SECONDS_SLACK:
            self.out.notes[f"the {what} column differs from {rule} ({rule} used)"] += 1
        return measured

    def finish(self) -> ParsedHistory:
        out = self.out
        if not self.naive_rows and len(self.offsets) == 1:
            out.timezone, out.timezone_source = next(iter(self.offsets)), "the data's offsets"
        else:
            out.timezone, out.timezone_source = self.zone_name, "--timezone"
            if self.offsets:
                found = ", ".join(f"{o} in {n}" for o, n in sorted(self.offsets.items()))
                out.notes[f"times carry offsets ({found} rows); the table's zone is {self.zone_name}"] = \
                    sum(self.offsets.values())
        if self.naive_rows:
            out.notes[f"times without an offset read in {self.zone_name}"] = self.naive_rows
        return out
