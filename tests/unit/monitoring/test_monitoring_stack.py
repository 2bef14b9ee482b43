"""monitoring/stack without starting servers: sim URL resolution, pid checks, status of a missing stack."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpupoc.exceptions import SourceUnavailable
from gpupoc.monitoring import stack


def test_sim_url_comes_from_sim_json_or_the_option(tmp_path):
    sim = tmp_path / "sim.json"
    sim.write_text(json.dumps({"url": "http://127.0.0.1:40001/", "pid": 1, "kubeconfig": "k"}))
    assert stack.resolve_sim_url(stack.StackOptions(sim_json=sim)) == "http://127.0.0.1:40001"
    assert stack.resolve_sim_url(stack.StackOptions(sim_json=sim, sim_url="http://x:1")) == "http://x:1"


def test_an_exporter_url_replaces_the_simulated_cluster_and_needs_no_sim_json(tmp_path):
    opts = stack.StackOptions(sim_json=tmp_path / "absent.json", metrics_url="http://127.0.0.1:40002/")
    assert stack.resolve_metrics_url(opts) == ("http://127.0.0.1:40002", "exporter")
    sim = tmp_path / "sim.json"
    sim.write_text(json.dumps({"url": "http://127.0.0.1:40001"}))
    assert stack.resolve_metrics_url(stack.StackOptions(sim_json=sim)) == ("http://127.0.0.1:40001",
                                                                           "simulated cluster")


def test_missing_sim_json_names_the_file_and_the_fix(tmp_path):
    with pytest.raises(SourceUnavailable) as err:
        stack.resolve_sim_url(stack.StackOptions(sim_json=tmp_path / "sim.json"))
    assert err.value.endpoint.endswith("sim.json") and "gpupoc sim serve" in err.value.fix


def test_status_and_down_of_a_stack_that_never_started(tmp_path):
    assert stack.status(tmp_path)["running"] is False
    assert stack.down(tmp_path) == []


def test_cli_status_exits_1_when_not_running(tmp_path):
    out = subprocess.run([sys.executable, "-m", "gpupoc.cli", "stack", "status", "--data-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "gpupoc stack up" in out.stdout


def test_cli_up_without_a_cluster_fails_with_the_fix(tmp_path):
    out = subprocess.run([sys.executable, "-m", "gpupoc.cli", "stack", "up", "--data-dir", str(tmp_path / "m"),
                          "--sim-json", str(tmp_path / "none.json")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "gpupoc sim serve" in out.stderr and "none.json" in out.stderr
