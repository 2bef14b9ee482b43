"""SenseTime's Helios traces (``cluster_log.csv``; S-Lab-System-Group/HeliosData, CC BY 4.0).

Columns: job_id, user, vc, gpu_num, cpu_num, node_num, state, submit_time, start_time, end_time, duration,
queue. Times have no offset (``2020-06-09 18:41:01``): they are read in ``--timezone``.
"""

from __future__ import annotations

from gpupoc.history.formats.engine import Column, SourceFormat
from gpupoc.history.formats.values import parse_count, parse_seconds, parse_text, parse_time

COLUMNS = (
    Column("job_id", "job_id", parse_text),
    Column("user", "user", parse_text),
    Column("vc", "vc", parse_text),
    Column("gpu_num", "gpu_num", parse_count),
    Column("cpu_num", "cpu_num", parse_count, required=False),
    Column("node_num", "node_num", parse_count),
    Column("state_raw", "state", parse_text),
    Column("submit_time", "submit_time", parse_time),
    Column("start_time", "start_time", parse_time),
    Column("end_time", "end_time", parse_time),
    Column("duration_s", "duration", parse_seconds, required=False),
    Column("queue_s", "queue", parse_seconds, required=False),
)
WRITE_COLUMNS = ("job_id", "user", "vc", "gpu_num", "cpu_num", "node_num", "state", "submit_time", "start_time",
                 "end_time", "duration", "queue")

FORMAT = SourceFormat("helios", COLUMNS, header_fix="expected the Helios trace columns (S-Lab-System-Group/"
                      "HeliosData data/<cluster>/cluster_log.csv)")
