"""Helios traces: times without an offset are read in the zone the user gives, and the vc is kept."""

from __future__ import annotations

from datetime import timedelta

from gpupoc.history.formats import read_history_file


def test_helios_rows_are_read_in_the_given_zone_with_their_vc(data_dir):
    parsed = read_history_file(data_dir / "helios_venus.csv", "helios", timezone="Asia/Shanghai")
    assert parsed.errors == [] and len(parsed.records) == 5
    assert (parsed.timezone, parsed.timezone_source) == ("Asia/Shanghai", "--timezone")
    assert parsed.notes == {"times without an offset read in Asia/Shanghai": 5}
    first = parsed.records[0]
    assert first.vc == "vcJkd" and first.user == "uXBbc" and first.duration_s == 36848.0
    assert first.submit_time.utcoffset() == timedelta(hours=8)


def test_helios_times_default_to_utc(data_dir):
    parsed = read_history_file(data_dir / "helios_venus.csv", "helios")
    assert parsed.timezone == "UTC" and parsed.records[0].submit_time.utcoffset() == timedelta(0)


def test_a_multi_node_helios_job_keeps_its_nodes(data_dir):
    gang = read_history_file(data_dir / "helios_venus.csv", "helios").records[-1]
    assert (gang.gpu_num, gang.node_num, gang.queue_s) == (16, 2, 600.0)
