"""``gpupoc history``: import, synth, plan and stats as a user runs them; the shipped sample is reproducible."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from gpupoc.cli import main
from gpupoc.history.replay import load_wave
from gpupoc.history.table import read_parquet
from gpupoc.plan import DEFAULT_PLAN

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "plans/history/kalos-300.csv"


def test_import_prints_what_it_read_and_writes_the_table(tmp_path, data_dir, capsys):
    out = tmp_path / "seren.parquet"
    assert main(["history", "import", str(data_dir / "acme_seren.csv"), "--format", "acme", "--cluster-gpus", "16",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "7 jobs from" in text and "times in +08:00 (the data's offsets)" in text
    assert "replayable on 16 GPUs: 4 of 7" in text and "not replayable: 1 too_large" in text
    assert len(read_parquet(out).records) == 7


def test_import_of_bad_rows_exits_2_naming_each_row(data_dir, capsys):
    assert main(["history", "import", str(data_dir / "acme_bad.csv"), "--format", "acme"]) == 2
    err = capsys.readouterr().err
    assert "row 2 (job 1), column gpu_num: expected a whole number >= 0, got 'eight'" in err
    assert "pass --skip-bad-rows" in err


def test_import_refuses_a_table_not_named_parquet(tmp_path, data_dir, capsys):
    assert main(["history", "import", str(data_dir / "acme_seren.csv"), "--format", "acme",
                 "--out", str(tmp_path / "x.csv")]) == 2
    assert "--out: the table is written as parquet" in capsys.readouterr().err


def test_the_shipped_sample_is_what_its_readme_command_generates(tmp_path, capsys):
    readme = (REPO / "plans/history/README.md").read_text()
    line = next(l for l in readme.splitlines() if l.startswith("gpupoc history synth"))
    argv = shlex.split(line)[1:]
    out = tmp_path / "kalos-300.csv"
    argv[argv.index("--out") + 1] = str(out)
    assert main(argv) == 0
    assert out.read_bytes() == SAMPLE.read_bytes()
    meta = yaml.safe_load((tmp_path / "kalos-300.meta.json").read_text())
    shipped = yaml.safe_load((REPO / "plans/history/kalos-300.meta.json").read_text())
    assert meta == shipped and meta["synthetic"] is True and meta["licence"] == "CC BY 4.0"
    assert re.search(r"states: completed .* \(published 54\.1%\)", capsys.readouterr().out)


def test_synth_without_out_only_prints_the_figures(capsys, tmp_path):
    assert main(["history", "synth", "--like", "seren", "--jobs", "50", "--seed", "1"]) == 0
    assert "(no --out: nothing written)" in capsys.readouterr().out


def test_plan_prints_the_mapping_and_writes_a_wave_that_reads_back(tmp_path, capsys):
    out = tmp_path / "wave.yaml"
    assert main(["history", "plan", str(SAMPLE), "--format", "acme", "--first", "40", "--compress", "96",
                 "--plan", str(DEFAULT_PLAN), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "40 of 40 jobs in the window replayed" in text and "user -> tenant (by GPU time, most first):" in text
    assert re.search(r"  u\w+ -> team-\w+: \d+ jobs, [\d.]+% of the GPU time", text)
    wave = load_wave(out)
    assert len(wave.items) == 40 and wave.source["synthetic"] is True
    assert wave.source["command"] == "gpupoc history synth --like kalos --jobs 300 --seed 7 --max-gpus 24"
    assert wave.source["licence"] == "CC BY 4.0"


def test_plan_of_a_file_that_is_not_parquet_needs_a_format(capsys):
    assert main(["history", "plan", str(SAMPLE), "--first", "5", "--compress", "96",
                 "--plan", str(DEFAULT_PLAN)]) == 2
    assert "not a .parquet table; pass --format" in capsys.readouterr().err


def test_stats_prints_the_figures_of_a_history(capsys):
    assert main(["history", "stats", str(SAMPLE), "--format", "acme"]) == 0
    assert "gpu_jobs: 300\ngpus_median: 1.0" in capsys.readouterr().out


def test_import_of_an_empty_history_exits_2_naming_the_file(tmp_path, capsys):
    f = tmp_path / "trace.csv"
    f.write_text("job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time\n")
    assert main(["history", "import", str(f), "--format", "acme"]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and "the header has no rows below it" in err and "Traceback" not in err


def test_import_of_a_gpu_count_beyond_the_table_exits_2_naming_the_row(tmp_path, capsys):
    f = tmp_path / "trace.csv"
    f.write_text("job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time\n"
                 "1,u1,1,99999999999999999999,8,Other,COMPLETED,2023-03-01 00:00:00+08:00,,\n")
    assert main(["history", "import", str(f), "--format", "acme", "--out", str(tmp_path / "t.parquet")]) == 2
    err = capsys.readouterr().err
    assert "row 2 (job 1), column gpu_num: count 99999999999999999999 is out of range (at most 2147483647)" in err
    assert "OverflowError" not in err and not (tmp_path / "t.parquet").exists()
