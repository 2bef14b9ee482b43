"""The wave's YAML: one line per item, read back to the same typed wave; a broken file names the field."""

from __future__ import annotations

import pytest
import yaml

from gpupoc.exceptions import ConfigError
from gpupoc.history.plan_wave import WaveOptions, plan_wave
from gpupoc.history.replay import Outcome, load_wave, render_yaml
from gpupoc.history.table import History
from gpupoc.history.model import JobState

from .conftest import job


@pytest.fixture
def wave(plan):
    jobs = [job("a", at=0, gpus=16, nodes=2, run=960), job("b", at=96, state=JobState.CANCELLED, run=960),
            job("c", at=192, state=JobState.FAILED, exit_code=2)]
    return plan_wave(History(jobs, "UTC"), plan, WaveOptions(compression=96.0, first=3),
                     source={"path": "h.parquet", "synthetic": True, "licence": "CC BY 4.0"})


def test_the_yaml_reads_back_as_the_same_wave(tmp_path, wave):
    f = tmp_path / "wave.yaml"
    f.write_text(render_yaml(wave, "a header\nof two lines"))
    assert load_wave(f) == wave


def test_each_item_is_one_line_under_replay_with_the_header_as_comments(wave):
    text = render_yaml(wave, "a header")
    assert text.startswith("# a header\nreplay:\n")
    item_lines = [line for line in text.splitlines() if line.startswith("  - {index:")]
    assert len(item_lines) == 3
    first = yaml.safe_load(item_lines[0][4:])
    assert first["job_id"] == "a" and first["replicas"] == 2 and first["gpus"] == 8
    assert first["at_seconds"] == 0.0 and first["duration_seconds"] == 10.0


def test_outcomes_and_their_times_survive_the_yaml(tmp_path, wave):
    f = tmp_path / "wave.yaml"
    f.write_text(render_yaml(wave))
    items = load_wave(f).items
    assert [i.outcome for i in items] == [Outcome.SUCCEED, Outcome.CANCEL, Outcome.FAIL]
    assert items[1].cancel_after_seconds == 10.0 and items[2].expected_exit_code == 2


def test_a_broken_wave_file_names_the_field(tmp_path, wave):
    data = yaml.safe_load(render_yaml(wave))
    data["replay"]["items"][1]["gpus"] = -2
    f = tmp_path / "wave.yaml"
    f.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"replay\.items\[1\]\.gpus: expected a positive integer, got -2"):
        load_wave(f)
