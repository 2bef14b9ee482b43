"""Any CSV with --columns: the mapping is checked, and the mapped file reads like the others."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.history.formats import read_history_file, source_format
from gpupoc.history.formats.csvmap import parse_columns
from gpupoc.history.model import JobState

MAPPING = ("job_id=Name,vc=Team,partition=Queue,gpu_num=GPUs,node_num=Nodes,state=Status,exit_code=Exit,"
           "submit_time=SubmittedAt,start_time=StartedAt,end_time=FinishedAt")


def test_a_mapped_export_reads_unix_and_iso_times_and_platform_states(data_dir):
    parsed = read_history_file(data_dir / "platform_export.csv", "csv", columns=MAPPING)
    assert parsed.errors == []
    a, b, c = parsed.records
    assert (a.job_id, a.vc, a.partition, a.gpu_num, a.state, a.duration_s, a.queue_s) == \
        ("train-a", "vision", "prod", 8, JobState.COMPLETED, 3600.0, 60.0)
    assert b.state is JobState.FAILED and b.exit_code == 137
    assert c.state is JobState.CANCELLED and c.state_raw == "Aborted"
    assert parsed.timezone == "UTC" and "times carry offsets (+00:00 in 2, +01:00 in 1 rows)" in next(iter(parsed.notes))


def test_a_mapping_naming_a_column_the_file_lacks_says_so(data_dir):
    with pytest.raises(ConfigError, match=r"missing column\(s\) GPU_COUNT for format csv .*name the file's real columns"):
        read_history_file(data_dir / "platform_export.csv", "csv", columns=MAPPING.replace("GPUs", "GPU_COUNT"))


def test_every_problem_of_a_mapping_is_listed():
    with pytest.raises(ConfigError) as exc:
        parse_columns("job_id=Name,gpus=GPUs,state,submit_time=A,submit_time=B")
    assert exc.value.errors == [
        "--columns: unknown field 'gpus'; fields: job_id, user, vc, partition, gpu_num, node_num, cpu_num, type, "
        "state, exit_code, submit_time, start_time, end_time, duration_s, queue_s",
        "--columns: expected field=Column pairs separated by commas, got 'state'; e.g. "
        "job_id=JobId,gpu_num=GPUs,state=Status,submit_time=Submitted,start_time=Started,end_time=Ended",
        "--columns: field 'submit_time' mapped twice; keep one",
    ]


def test_a_mapping_without_a_required_field_names_it():
    with pytest.raises(ConfigError, match="--columns: no column for gpu_num, state; add e.g. gpu_num=<your column>"):
        parse_columns("job_id=Name,submit_time=At")


def test_columns_are_refused_for_the_fixed_formats_and_required_for_csv():
    with pytest.raises(ConfigError, match="--columns: only applies to --format csv"):
        source_format("acme", "job_id=x")
    with pytest.raises(ConfigError, match="--columns: required with --format csv"):
        source_format("csv")
