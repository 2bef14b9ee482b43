"""Import: bad rows stop it (or are counted with --skip-bad-rows); what cannot be replayed is counted."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.history.cluster import ClusterShape
from gpupoc.history.importer import SHOWN_ERRORS, import_history
from gpupoc.history.model import SkipReason
from gpupoc.history.table import write_sidecar


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
