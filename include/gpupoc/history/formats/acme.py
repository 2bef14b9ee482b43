"""Shanghai AI Lab's Acme traces (``trace_seren.csv``, ``trace_kalos.csv``; InternLM/AcmeTrace, CC BY 4.0).

Columns: job_id, user, node_num, gpu_num, cpu_num, type, state, submit_time, start_time, end_time, duration,
queue, gpu_time (Kalos adds mem_per_pod_GB, shared_mem_per_pod, fail_time, stop_time, which are not read).
Times carry their offset (``2023-03-01 00:18:22+08:00``), which the table keeps. ``duration`` and ``queue``
are used only when a time is missing: in Kalos' rows ``duration`` counts from the submission.
"""

from __future__ import annotations

from gpupoc.history.formats.engine import Column, SourceFormat
from gpupoc.history.formats.values import parse_count, parse_seconds, parse_text, parse_time

COLUMNS = (
    Column("job_id", "job_id", parse_text),
    Column("user", "user", parse_text),
    Column("node_num", "node_num", parse_count),
    Column("gpu_num", "gpu_num", parse_count),
    Column("cpu_num", "cpu_num", parse_count, required=False),
    Column("type", "type", parse_text, required=False),
    Column("state_raw", "state", parse_text),
    Column("submit_time", "submit_time", parse_time),
    Column("start_time", "start_time", parse_time),
    Column("end_time", "end_time", parse_time),
    Column("duration_s", "duration", parse_seconds, required=False),
    Column("queue_s", "queue", parse_seconds, required=False),
)
# The columns a synthetic Acme-like history is written with (``gpu_time`` = gpu_num x duration).
WRITE_COLUMNS = ("job_id", "user", "node_num", "gpu_num", "cpu_num", "type", "state", "submit_time", "start_time",
                 "end_time", "duration", "queue", "gpu_time")

FORMAT = SourceFormat("acme", COLUMNS, header_fix="expected the Acme trace columns (InternLM/AcmeTrace "
                      "data/job_trace/trace_*.csv)")
