"""The job table on disk: parquet keeps every column, the zone and the metadata; sidecars beside CSVs."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.history.formats import read_history_file
from gpupoc.history.model import COLUMNS, SkipReason
from gpupoc.history.table import History, read_parquet, read_sidecar, sidecar_path, write_parquet, write_sidecar


def test_a_table_round_trips_with_its_zone_and_metadata(tmp_path, data_dir):
    parsed = read_history_file(data_dir / "acme_seren.csv", "acme")
    records = [r.with_skip(SkipReason.NO_GPU if r.gpu_num == 0 else None) for r in parsed.records]
    path = write_parquet(tmp_path / "h.parquet", History(records, parsed.timezone, {"synthetic": False}))
    table = pq.read_table(path)
    assert table.column_names == list(COLUMNS)
    assert str(table.schema.field("submit_time").type) == "timestamp[us, tz=+08:00]"
    back = read_parquet(path)
    assert back.records == records
    assert back.timezone == "+08:00" and back.metadata == {"synthetic": False, "timezone": "+08:00"}


def test_named_zones_survive_the_round_trip(tmp_path, data_dir):
    parsed = read_history_file(data_dir / "helios_venus.csv", "helios", timezone="Asia/Shanghai")
    back = read_parquet(write_parquet(tmp_path / "h.parquet", History(parsed.records, "Asia/Shanghai")))
    assert back.records[0].submit_time.isoformat() == "2020-06-09T18:41:01+08:00"


def test_a_parquet_file_that_is_not_a_history_is_refused(tmp_path):
    import pyarrow as pa

    pq.write_table(pa.table({"x": [1]}), tmp_path / "other.parquet")
    with pytest.raises(ConfigError, match="not a job history table, missing job_id, gpu_num, state, submit_time"):
        read_parquet(tmp_path / "other.parquet")


def test_the_sidecar_sits_beside_the_csv(tmp_path):
    csv = tmp_path / "kalos-300.csv"
    assert sidecar_path(csv) == tmp_path / "kalos-300.meta.json"
    assert read_sidecar(csv) is None
    write_sidecar(csv, {"synthetic": True})
    assert read_sidecar(csv) == {"synthetic": True}


def test_a_window_reads_only_the_jobs_submitted_in_it(tmp_path, data_dir):
    from datetime import datetime, timedelta, timezone

    parsed = read_history_file(data_dir / "acme_seren.csv", "acme")
    path = write_parquet(tmp_path / "h.parquet", History(parsed.records, parsed.timezone))
    start = datetime(2023, 3, 1, 0, 30, tzinfo=timezone(timedelta(hours=8)))
    back = read_parquet(path, submitted=(start, start + timedelta(minutes=11)))
    assert [r.job_id for r in back.records] == ["5778470", "5778471", "5778472"]  # 5778473 at 00:41 is out
    assert back.timezone == "+08:00"
