"""``gpupoc plan validate``: a summary and exit 0, or every error with its path and exit 2."""

from __future__ import annotations

import copy
import subprocess
import sys

import yaml

from gpupoc.cli import main
from gpupoc.plan import DEFAULT_PLAN

from .conftest import off_the_simulated_cluster


def test_validate_default_plan_prints_summary_and_exits_0(capsys):
    assert main(["plan", "validate", str(DEFAULT_PLAN)]) == 0
    out = capsys.readouterr().out
    assert "plan 'gpupoc-sim-default'" in out
    assert "queue_congestion: enabled" in out and "adapter kube-scheduler" in out


def test_validate_lists_every_error_and_exits_2(tmp_path, default_data, capsys):
    data = default_data | {"tenants": [dict(t) for t in default_data["tenants"]]}
    data["tenants"][1] = dict(data["tenants"][1], quota={"gpus": -4, "pods": 60})
    data["tenants"][2] = dict(data["tenants"][2], quota={"gpus": 8, "pods": 0})
    f = tmp_path / "plan.yaml"
    f.write_text(yaml.safe_dump(data))
    assert main(["plan", "validate", str(f)]) == 2
    err = capsys.readouterr().err
    assert "invalid POC plan, 2 error(s)" in err
    assert "tenants[1].quota.gpus: expected a positive integer, got -4" in err
    assert "tenants[2].quota.pods: expected a positive integer, got 0" in err


def test_validate_prints_warnings_about_files_that_appear_later_and_exits_0(tmp_path, default_data, capsys):
    f = tmp_path / "plans" / "plan.yaml"  # its ../var/sim/kubeconfig does not exist yet
    f.parent.mkdir()
    f.write_text(yaml.safe_dump(default_data))
    assert main(["plan", "validate", str(f)]) == 0
    captured = capsys.readouterr()
    assert "plan 'gpupoc-sim-default'" in captured.out
    assert f"{f}: 2 warning(s):" in captured.err
    assert "  platform.kubeconfig: '../var/sim/kubeconfig'" in captured.err
    assert "`gpupoc sim serve` writes it when the simulated cluster starts" in captured.err


def test_validate_refuses_a_schemeless_url_then_a_missing_kubeconfig_and_scorecard(tmp_path, default_data, capsys):
    data = off_the_simulated_cluster(copy.deepcopy(default_data))
    data = data | {"platform": dict(default_data["platform"], kubeconfig="prod.kubeconfig"),
                           "report": dict(default_data["report"], scorecard="scores.yaml"),
                           "evidence_sources": dict(default_data["evidence_sources"], prometheus_url="prom:9090")}
    f = tmp_path / "plan.yaml"
    f.write_text(yaml.safe_dump(data))
    assert main(["plan", "validate", str(f)]) == 2
    err = capsys.readouterr().err
    assert "invalid POC plan, 1 error(s)" in err, "files are checked once the structure is valid"
    assert "  evidence_sources.prometheus_url: expected an http:// or https:// URL with its scheme, such as " \
           "'http://prom:9090', got 'prom:9090'" in err
    data["evidence_sources"]["prometheus_url"] = "http://prom:9090"
    f.write_text(yaml.safe_dump(data))
    assert main(["plan", "validate", str(f)]) == 2
    err = capsys.readouterr().err
    assert "invalid POC plan, 2 error(s)" in err
    assert f"  platform.kubeconfig: 'prod.kubeconfig' ({tmp_path}/prod.kubeconfig) not found;" in err
    assert f"  report.scorecard: 'scores.yaml' ({tmp_path}/scores.yaml) not found;" in err


def test_validate_as_a_command(tmp_path):
    f = tmp_path / "plan.yaml"
    f.write_text("name: x\n")
    proc = subprocess.run([sys.executable, "-m", "gpupoc.cli", "plan", "validate", str(f)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "platform: Field required" in proc.stderr


def test_hash_prints_the_plan_hash(capsys):
    from gpupoc.plan import load_plan, plan_hash

    assert main(["plan", "hash", str(DEFAULT_PLAN)]) == 0
    assert capsys.readouterr().out.strip() == plan_hash(load_plan(DEFAULT_PLAN))


def test_schema_prints_a_json_schema_of_the_plan(capsys):
    import json

    assert main(["plan", "schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert {"platform", "tenants", "pools", "workloads", "test_classes", "window"} <= set(schema["required"])
