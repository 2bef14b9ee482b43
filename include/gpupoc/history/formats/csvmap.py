"""Any CSV: ``--columns job_id=JobId,gpu_num=GPUs,...`` names the file's column for each field of the table.

Fields: job_id, user, vc, partition, gpu_num, node_num, cpu_num, type, state, exit_code, submit_time,
start_time, end_time, duration_s, queue_s. job_id, gpu_num, state and submit_time are required; give
start_time and end_time, or duration_s, so jobs can be replayed. Times are ISO 8601 (with or without an
offset) or Unix seconds; durations are seconds or ``[D-]HH:MM:SS``. Column names cannot contain ``,`` or ``=``.
"""

from __future__ import annotations

from gpupoc.exceptions import ConfigError
from gpupoc.history.formats.engine import Column, SourceFormat
from gpupoc.history.formats.values import (
    parse_count,
    parse_exit_code,
    parse_seconds,
    parse_text,
    parse_time,
)

# field -> (parser, target in the JobRecord)
FIELDS = {
    "job_id": (parse_text, "job_id"),
    "user": (parse_text, "user"),
    "vc": (parse_text, "vc"),
    "partition": (parse_text, "partition"),
    "gpu_num": (parse_count, "gpu_num"),
    "node_num": (parse_count, "node_num"),
    "cpu_num": (parse_count, "cpu_num"),
    "type": (parse_text, "type"),
    "state": (parse_text, "state_raw"),
    "exit_code": (parse_exit_code, "exit_code"),
    "submit_time": (parse_time, "submit_time"),
    "start_time": (parse_time, "start_time"),
    "end_time": (parse_time, "end_time"),
    "duration_s": (parse_seconds, "duration_s"),
    "queue_s": (parse_seconds, "queue_s"),
}
REQUIRED = ("job_id", "gpu_num", "state", "submit_time")
EXAMPLE = "job_id=JobId,gpu_num=GPUs,state=Status,submit_time=Submitted,start_time=Started,end_time=Ended"


def parse_columns(spec: str | None) -> dict[str, str]:
    """``job_id=JobId,gpu_num=GPUs`` -> {"job_id": "JobId", "gpu_num": "GPUs"}, every problem listed."""
    if not spec:
        raise ConfigError("--columns", [f"--columns: required with --format csv; e.g. --columns {EXAMPLE}"])
    mapping: dict[str, str] = {}
    errors = []
    for part in spec.split(","):
        field, sep, column = (s.strip() for s in part.partition("="))
        if not sep or not field or not column:
            errors.append(f"--columns: expected field=Column pairs separated by commas, got {part!r}; e.g. {EXAMPLE}")
        elif field not in FIELDS:
            errors.append(f"--columns: unknown field {field!r}; fields: {', '.join(FIELDS)}")
        elif field in mapping:
            errors.append(f"--columns: field {field!r} mapped twice; keep one")
        else:
            mapping[field] = column
    missing = [f for f in REQUIRED if f not in mapping and not errors]
    if missing:
        errors.append(f"--columns: no column for {', '.join(missing)}; add e.g. {missing[0]}=<your column>")
    if errors:
        raise ConfigError("--columns", errors)
    return mapping


def source_format(spec: str | None, delimiter: str = ",") -> SourceFormat:
    mapping = parse_columns(spec)
    columns = tuple(Column(FIELDS[f][1], col, FIELDS[f][0]) for f, col in mapping.items())
    return SourceFormat("csv", columns, delimiter=delimiter,
                        header_fix="name the file's real columns in --columns (field=Column)")
