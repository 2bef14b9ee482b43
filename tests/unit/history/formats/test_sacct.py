"""Slurm sacct --parsable2: AllocTRES GPUs, local times, Elapsed, states with who cancelled, job steps."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.history.formats import read_history_file
from gpupoc.history.formats.sacct import gpus_of_tres
from gpupoc.history.formats.values import ValueProblem
from gpupoc.history.model import JobState


@pytest.fixture(scope="module")
def parsed(data_dir):
    return read_history_file(data_dir / "sacct.txt", "sacct", timezone="Europe/Berlin")


def by_id(parsed, job_id):
    return next(r for r in parsed.records if r.job_id == job_id)


def test_job_steps_are_counted_and_left_out(parsed):
    assert parsed.errors == [] and parsed.rows_read == 10 and len(parsed.records) == 8
    assert parsed.left_out == {"job steps (sacct --allocations leaves them out)": 2}


def test_gpus_come_from_alloc_tres_plain_or_typed(parsed):
    assert by_id(parsed, "1001").gpu_num == 2 and by_id(parsed, "1001").cpu_num == 8
    assert by_id(parsed, "1002").gpu_num == 8 and by_id(parsed, "1002").node_num == 2  # gres/gpu:a100=8
    assert by_id(parsed, "1006").gpu_num == 0  # a CPU job


def test_local_times_are_read_in_the_cluster_zone(parsed):
    first = by_id(parsed, "1001")
    assert parsed.timezone == "Europe/Berlin" and str(first.submit_time.tzinfo) == "Europe/Berlin"
    assert first.submit_time.isoformat() == "2024-03-01T10:00:00+01:00"
    assert (first.queue_s, first.duration_s, first.exit_code) == (30.0, 3600.0, 0)


def test_states_are_normalised_and_the_raw_state_kept(parsed):
    cancelled = by_id(parsed, "1003")
    assert cancelled.state is JobState.CANCELLED and cancelled.state_raw == "CANCELLED by 1234"
    assert cancelled.start_time is None  # Start was None: it never ran
    assert by_id(parsed, "1004").state is JobState.TIMEOUT and by_id(parsed, "1004").duration_s == 93784.0
    assert by_id(parsed, "1005").state is JobState.NODE_FAIL
    assert by_id(parsed, "1002").exit_code == 3
    assert by_id(parsed, "1008").exit_code == 143  # 0:15, killed by SIGTERM


def test_a_running_job_has_no_run_time_although_elapsed_counts(parsed):
    running = by_id(parsed, "1007")
    assert running.state is JobState.OTHER and running.end_time is None and running.duration_s is None


def test_bad_alloc_tres_and_elapsed_are_named_with_their_fix(data_dir):
    parsed = read_history_file(data_dir / "sacct_bad.txt", "sacct")
    assert [str(e) for e in parsed.errors] == [
        "row 2 (job 2001), column AllocTRES: gres/gpu count 'two' is not a whole number >= 0 (in "
        "'billing=8,cpu=8,gres/gpu=two,mem=64G,node=1'); expected e.g. billing=8,cpu=8,gres/gpu=2,mem=64G,node=1",
        "row 3 (job 2002), column Elapsed: expected seconds >= 0 or an elapsed time such as 1-02:03:04, got 'an hour'; "
        "write the number of seconds",
        "row 4 (job 2003), column AllocTRES: expected key=value pairs such as billing=8,cpu=8,gres/gpu=2,mem=64G,node=1, "
        "got 'cpu8'; export AllocTRES unchanged from sacct",
    ]
    assert [r.job_id for r in parsed.records] == ["2004"]


def test_sacct_without_its_header_says_how_to_export_it(tmp_path):
    f = tmp_path / "sacct.txt"
    f.write_text("1001|alice|vision|gpu|gres/gpu=2|1|COMPLETED|2024-03-01T10:00:00|2024-03-01T10:00:30|"
                 "2024-03-01T11:00:30|01:00:00\n")
    with pytest.raises(ConfigError, match="run sacct --parsable2 --format=JobID,User,.* without --noheader"):
        read_history_file(f, "sacct")


def test_parsable_output_with_a_trailing_delimiter_reads_the_same(tmp_path, data_dir):
    lines = (data_dir / "sacct.txt").read_text().splitlines()
    f = tmp_path / "sacct.txt"
    f.write_text("".join(f"{line}|\n" for line in lines))
    parsed = read_history_file(f, "sacct")
    assert parsed.errors == [] and len(parsed.records) == 8


def test_typed_gres_are_summed_when_there_is_no_plain_count():
    assert gpus_of_tres("cpu=8,gres/gpu:a100=2,gres/gpu:h100=4") == 6
    assert gpus_of_tres("cpu=8,gres/gpu=4,gres/gpu:a100=4") == 4
    assert gpus_of_tres("") == 0
    with pytest.raises(ValueProblem):
        gpus_of_tres("cpu=8,gres/gpu:a100=x")
