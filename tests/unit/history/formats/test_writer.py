"""Writing Acme and Helios CSVs: what is written reads back as the same jobs."""

from __future__ import annotations

from gpupoc.history.formats import read_history_file
from gpupoc.history.formats.writer import write_trace_csv
from gpupoc.history.table import History


def test_an_acme_file_written_back_reads_as_the_same_jobs(tmp_path, data_dir):
    parsed = read_history_file(data_dir / "acme_seren.csv", "acme")
    out = write_trace_csv(tmp_path / "copy.csv", History(parsed.records, parsed.timezone), "acme")
    again = read_history_file(out, "acme")
    strip = [(r.job_id, r.gpu_num, r.node_num, r.state, r.submit_time, r.start_time, r.end_time) for r in parsed.records]
    assert [(r.job_id, r.gpu_num, r.node_num, r.state, r.submit_time, r.start_time, r.end_time)
            for r in again.records] == strip
    assert again.timezone == "+08:00"


def test_helios_times_are_written_without_offset_in_the_history_zone(tmp_path, data_dir):
    parsed = read_history_file(data_dir / "helios_venus.csv", "helios", timezone="Asia/Shanghai")
    out = write_trace_csv(tmp_path / "copy.csv", History(parsed.records, "Asia/Shanghai"), "helios")
    assert out.read_text().splitlines()[1] == \
        "1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0"
