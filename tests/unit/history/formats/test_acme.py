"""Acme traces: Seren and Kalos rows as the repository shows them, and each kind of bad row."""

from __future__ import annotations

from datetime import timedelta

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.history.formats import read_history_file
from gpupoc.history.model import JobState


def test_seren_rows_keep_their_offset_and_every_column(data_dir):
    parsed = read_history_file(data_dir / "acme_seren.csv", "acme")
    assert parsed.errors == [] and parsed.rows_read == 7 and len(parsed.records) == 7
    assert (parsed.timezone, parsed.timezone_source) == ("+08:00", "the data's offsets")
    first = parsed.records[0]
    assert (first.job_id, first.user, first.gpu_num, first.node_num, first.cpu_num, first.type) == \
        ("5778432", "u5907", 8, 1, 128, "Other")
    assert first.state is JobState.FAILED and first.source_row == 2
    assert first.submit_time.utcoffset() == timedelta(hours=8)
    assert (first.duration_s, first.queue_s) == (117.0, 32.0)
    assert [r.state for r in parsed.records[4:]] == [JobState.CANCELLED, JobState.TIMEOUT, JobState.NODE_FAIL]


def test_a_job_cancelled_before_it_started_has_no_start_and_no_run_time(data_dir):
    cancelled = read_history_file(data_dir / "acme_seren.csv", "acme").records[4]
    assert cancelled.start_time is None and cancelled.end_time is None and cancelled.duration_s == 0


def test_kalos_duration_counts_from_submission_so_end_minus_start_is_used_and_noted(data_dir):
    parsed = read_history_file(data_dir / "acme_kalos.csv", "acme")
    assert [r.duration_s for r in parsed.records] == [8.0, 70.0]  # the file says 18 and 82 (end - submit)
    assert parsed.notes == {"the duration column differs from end - start (end - start used)": 2}
    assert parsed.timezone == "+00:00"


def test_every_bad_row_is_named_with_its_column_and_fix(data_dir):
    parsed = read_history_file(data_dir / "acme_bad.csv", "acme")
    messages = [str(e) for e in parsed.errors]
    assert messages == [
        "row 2 (job 1), column gpu_num: expected a whole number >= 0, got 'eight'; write a count such as 8",
        "row 3 (job 2), column end_time: end 2023-03-01T00:01:00+08:00 is before start 2023-03-01T00:02:00+08:00; "
        "fix the end or the start time",
        "row 4 (job 3), column submit_time: expected an ISO 8601 time such as 2024-03-01T10:00:00 or "
        "2023-03-01 00:18:22+08:00, got 'yesterday'; write the time in ISO 8601 (or Unix seconds)",
        "row 5 (job 2), column job_id: job id '2' already at row 3; job ids must be unique: remove the duplicate row",
        "row 6 (job 4), column gpu_num: expected a whole number >= 0, got '-1'; write a count such as 8",
        "row 7 (job 5), column state: empty; every job needs a state",
        "row 7 (job 5), column node_num: 0 nodes for 4 GPUs; a GPU job runs on at least 1 node",
    ]
    assert parsed.bad_rows == 6 and [r.job_id for r in parsed.records] == ["6"]


def test_a_file_without_the_acme_columns_says_which_are_missing(tmp_path):
    f = tmp_path / "trace.csv"
    f.write_text("job_id,user,gpu_num\n1,u1,8\n")
    with pytest.raises(ConfigError, match=r"header: missing column\(s\) end_time, node_num, start_time, state, "
                                          r"submit_time for format acme"):
        read_history_file(f, "acme")


def test_a_row_with_too_few_fields_is_an_error_not_a_shifted_row(tmp_path, data_dir):
    lines = (data_dir / "acme_seren.csv").read_text().splitlines()
    f = tmp_path / "trace.csv"
    f.write_text("\n".join([lines[0], lines[1], "5778999,u1,1,8"]) + "\n")
    parsed = read_history_file(f, "acme")
    assert [str(e) for e in parsed.errors] == [
        "row 3, column (row): 4 fields, the header has 13; check the delimiter (',') and the quoting"]
