"""Import: bad rows stop it (or are counted with --skip-bad-rows); what cannot be replayed is counted."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.history.cluster import ClusterShape
from gpupoc.history.importer import SHOWN_ERRORS, import_history
from gpupoc.history.model import SkipReason
from gpupoc.history.table import to_arrow, write_sidecar


def test_jobs_that_cannot_be_replayed_stay_in_the_table_counted_per_reason(data_dir, cluster):
    result = import_history(data_dir / "acme_seren.csv", "acme", cluster=cluster)
    assert len(result.history.records) == 7
    assert result.skip_counts == {"no_gpu": 1, "not_started": 1, "too_large": 1}
    assert {r.job_id: r.skip_reason for r in result.history.records if r.skip_reason} == {
        "5778471": SkipReason.NO_GPU, "5778472": SkipReason.NOT_STARTED, "5778474": SkipReason.TOO_LARGE}
    meta = result.history.metadata
    assert meta["not_replayable"] == {"no_gpu": 1, "not_started": 1, "too_large": 1}
    assert meta["cluster"] == "training 3x8, inference 2x4" and meta["source"]["format"] == "acme"
    assert len(meta["source"]["sha256"]) == 64 and meta["synthetic"] is False
    summary = "\n".join(result.summary())
    assert "replayable on training 3x8, inference 2x4: 4 of 7" in summary
    assert "not replayable: 1 too_large" in summary


def test_a_gpu_total_counts_larger_jobs_as_too_large(data_dir):
    result = import_history(data_dir / "acme_seren.csv", "acme", cluster=ClusterShape.of_gpus(8))
    assert result.skip_counts["too_large"] == 2  # the 16- and 64-GPU jobs


def test_bad_rows_stop_the_import_with_each_row_named(data_dir):
    with pytest.raises(ConfigError) as exc:
        import_history(data_dir / "acme_bad.csv", "acme")
    assert exc.value.errors[0].startswith("row 2 (job 1), column gpu_num:")
    assert exc.value.errors[-1] == ("fix the rows, or pass --skip-bad-rows to import the good rows "
                                    "(the bad ones are counted)")


def test_skip_bad_rows_imports_the_good_ones_and_counts_the_bad(data_dir, tmp_path):
    errors = tmp_path / "errors.txt"
    result = import_history(data_dir / "acme_bad.csv", "acme", skip_bad_rows=True, errors_file=errors)
    assert [r.job_id for r in result.history.records] == ["6"]
    assert result.history.metadata["bad_rows"] == 6
    assert len(errors.read_text().splitlines()) == 7
    assert "bad rows left out: 6 (7 errors)" in "\n".join(result.summary())


def test_a_flood_of_bad_rows_lists_the_first_and_counts_the_rest(tmp_path):
    f = tmp_path / "trace.csv"
    header = "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue"
    f.write_text(header + "\n" + "".join(f"{i},u1,1,x,1,Other,COMPLETED,2023-01-01 00:00:00+00:00,,,,\n"
                                         for i in range(SHOWN_ERRORS + 10)))
    with pytest.raises(ConfigError) as exc:
        import_history(f, "acme")
    assert len(exc.value.errors) == SHOWN_ERRORS + 2
    assert exc.value.errors[SHOWN_ERRORS] == "... and 10 more errors (60 bad rows in all): --errors FILE lists them all"


def test_the_metadata_beside_a_csv_travels_into_the_table(tmp_path, data_dir):
    f = tmp_path / "sample.csv"
    f.write_text((data_dir / "acme_seren.csv").read_text())
    write_sidecar(f, {"synthetic": True, "generator": "gpupoc history synth"})
    meta = import_history(f, "acme").history.metadata
    assert meta["synthetic"] is True and meta["origin"]["generator"] == "gpupoc history synth"


HUGE = "99999999999999999999"
ACME = "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue"
ACME_ROW = {"node_num": "1", "gpu_num": "8", "cpu_num": "8", "submit_time": "2023-03-01 00:00:00+08:00",
            "start_time": "2023-03-01 00:00:10+08:00", "end_time": "2023-03-01 00:01:10+08:00", "duration": "60",
            "queue": "10"}
HELIOS = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue"
SACCT = "JobID|User|Account|Partition|AllocTRES|NNodes|State|Submit|Start|End|Elapsed|ExitCode"
SACCT_ROW = {"AllocTRES": "cpu=8,gres/gpu=2", "NNodes": "1", "Submit": "2024-03-01T10:00:00",
             "Start": "2024-03-01T10:00:30", "End": "2024-03-01T11:00:30", "Elapsed": "01:00:00", "ExitCode": "0:0"}
CSV_COLUMNS = "job_id=Name,gpu_num=GPUs,node_num=Nodes,cpu_num=CPUs,state=Status,exit_code=Exit,submit_time=At,duration_s=Run"
CSV = "Name,GPUs,Nodes,CPUs,Status,Exit,At,Run"
CSV_ROW = {"GPUs": "8", "Nodes": "1", "CPUs": "8", "Exit": "0", "At": "1709287200", "Run": "60"}


def _row(header: str, sep: str, values: dict[str, str], job: str) -> str:
    fixed = {"job_id": job, "JobID": job, "Name": job, "user": "u1", "User": "u1", "vc": "vc1", "Account": "a",
             "Partition": "gpu", "type": "Other", "state": "COMPLETED", "State": "COMPLETED", "Status": "Succeeded"}
    return sep.join(values.get(c, fixed.get(c, "")) for c in header.split(sep))


# (format, --columns, header, delimiter, a good row's values, the column set out of range, its value)
OUT_OF_RANGE = [("acme", None, ACME, ",", ACME_ROW, c, v) for c, v in
                [("gpu_num", HUGE), ("node_num", HUGE), ("cpu_num", HUGE), ("duration", "9" * 400),
                 ("queue", "9" * 400), ("submit_time", HUGE)]]
OUT_OF_RANGE += [("helios", None, HELIOS, ",", ACME_ROW, c, HUGE) for c in ("gpu_num", "cpu_num", "node_num")]
OUT_OF_RANGE += [("sacct", None, SACCT, "|", SACCT_ROW, c, v) for c, v in
                 [("AllocTRES", f"cpu=8,gres/gpu={HUGE}"), ("AllocTRES", f"cpu={HUGE},gres/gpu=2"),
                  ("AllocTRES", "gres/gpu:a100=2147483647,gres/gpu:h100=1"), ("NNodes", HUGE),
                  ("ExitCode", f"0:{HUGE}"), ("Elapsed", f"{HUGE}-00:00:00")]]
OUT_OF_RANGE += [("csv", CSV_COLUMNS, CSV, ",", CSV_ROW, c, v) for c, v in
                 [("GPUs", HUGE), ("Nodes", HUGE), ("CPUs", HUGE), ("Exit", HUGE), ("At", HUGE), ("Run", "9" * 400)]]


@pytest.mark.parametrize("fmt, columns, header, sep, good, column, value", OUT_OF_RANGE,
                         ids=[f"{f}-{c}-{v[:12]}" for f, _, _, _, _, c, v in OUT_OF_RANGE])
def test_an_out_of_range_number_is_a_row_error_in_every_format(tmp_path, fmt, columns, header, sep, good, column,
                                                               value):
    f = tmp_path / "history.txt"
    rows = [_row(header, sep, good, "1"), _row(header, sep, {**good, column: value}, "2")]
    f.write_text("\n".join([header, *rows]) + "\n")
    with pytest.raises(ConfigError) as exc:
        import_history(f, fmt, columns=columns)
    first = exc.value.errors[0]
    assert first.startswith(f"row 3 (job 2), column {column}: ") and "out of range" in first, exc.value.errors
    assert len(exc.value.errors) == 2, "one error for the bad cell, then the fix of the import"
    good_rows = import_history(f, fmt, columns=columns, skip_bad_rows=True)
    assert [r.job_id for r in good_rows.history.records] == ["1"]
    to_arrow(good_rows.history)  # the good row still makes a table


@pytest.mark.parametrize("fmt, columns, header, sep", [("acme", None, ACME, ","), ("helios", None, HELIOS, ","),
                                                        ("sacct", None, SACCT, "|"), ("csv", CSV_COLUMNS, CSV, ",")])
def test_a_history_with_a_header_and_no_rows_is_an_error_naming_the_file(tmp_path, fmt, columns, header, sep):
    f = tmp_path / "empty.txt"
    f.write_text(header + "\n\n")
    with pytest.raises(ConfigError) as exc:
        import_history(f, fmt, columns=columns)
    assert exc.value.source == str(f)
    assert exc.value.errors == [f"(rows): the header has no rows below it, so there are no jobs to import; "
                                f"export the history with its jobs (format {fmt})"]


def test_a_history_whose_rows_are_all_left_out_or_skipped_is_an_error(tmp_path, data_dir):
    steps = tmp_path / "steps.txt"
    steps.write_text(SACCT + "\n" + _row(SACCT, "|", SACCT_ROW, "7.batch") + "\n")
    with pytest.raises(ConfigError, match=r"none of the 1 rows is a job \(1 job steps"):
        import_history(steps, "sacct")
    bad = tmp_path / "bad.csv"
    bad.write_text(ACME + "\n" + _row(ACME, ",", {**ACME_ROW, "gpu_num": "eight"}, "1") + "\n")
    with pytest.raises(ConfigError, match=r"none of the 1 rows is a job \(1 bad\)"):
        import_history(bad, "acme", skip_bad_rows=True)
