"""Files a plan names: missing ones are refused with path and fix, or warned about when they appear later."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml

from gpupoc.exceptions import ConfigError
from gpupoc.plan import load_plan
from gpupoc.plan.files import in_sim_data_dir

from .conftest import off_the_simulated_cluster


def write_plan(data: dict, root: Path) -> Path:
    """``<root>/plans/plan.yaml``: the default plan's ``../var/...`` paths land in ``<root>/var``."""
    f = root / "plans" / "plan.yaml"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(yaml.safe_dump(data, sort_keys=False))
    return f


def errors_of(f: Path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_plan(f)
    return info.value.errors


def test_a_fresh_clone_without_var_loads_with_warnings_only(data, tmp_path):
    plan = load_plan(write_plan(data, tmp_path))
    assert not (tmp_path / "var").exists()
    kube, audit = plan.warnings
    assert kube == (f"platform.kubeconfig: '../var/sim/kubeconfig' ({tmp_path}/var/sim/kubeconfig) does not exist "
                    "yet; `gpupoc sim serve` writes it when the simulated cluster starts (`make sim` or `make demo`)")
    assert audit.startswith("evidence_sources.audit_log_path: '../var/sim/audit.log'")
    assert "`gpupoc sim serve` writes it" in audit


def test_no_warnings_once_the_simulated_cluster_has_written_its_files(data, tmp_path):
    (tmp_path / "var" / "sim").mkdir(parents=True)
    (tmp_path / "var" / "sim" / "kubeconfig").write_text("apiVersion: v1\n")
    (tmp_path / "var" / "sim" / "audit.log").write_text("")
    assert load_plan(write_plan(data, tmp_path)).warnings == ()


def test_a_missing_kubeconfig_outside_the_sim_data_dir_is_refused_with_the_fix(data, tmp_path):
    off_the_simulated_cluster(data)
    data["platform"]["kubeconfig"] = "clusters/prod.kubeconfig"
    errs = errors_of(write_plan(data, tmp_path))
    assert errs == [f"platform.kubeconfig: 'clusters/prod.kubeconfig' ({tmp_path}/plans/clusters/prod.kubeconfig) "
                    "not found; point it at an existing kubeconfig (relative paths resolve against the plan's "
                    "directory), or use kubernetes_conn_id or in_cluster instead"]


def test_an_absolute_kubeconfig_is_shown_once(data, tmp_path):
    off_the_simulated_cluster(data)
    data["platform"]["kubeconfig"] = str(tmp_path / "nowhere" / "config")
    (err,) = errors_of(write_plan(data, tmp_path))
    assert err.startswith(f"platform.kubeconfig: '{tmp_path}/nowhere/config' not found;"), err


def test_a_kubeconfig_in_a_data_dir_the_sim_has_used_is_a_warning(data, tmp_path):
    sim_dir = tmp_path / "cluster-state"
    (sim_dir / "pki").mkdir(parents=True)
    data["platform"]["kubeconfig"] = str(sim_dir / "kubeconfig-http")
    plan = load_plan(write_plan(data, tmp_path))
    assert plan.warnings[0].startswith(f"platform.kubeconfig: '{sim_dir}/kubeconfig-http' does not exist yet;")


def test_the_sim_data_dir_is_var_sim_or_a_directory_with_the_clusters_state(tmp_path):
    assert in_sim_data_dir(tmp_path / "var" / "sim" / "kubeconfig")
    assert not in_sim_data_dir(tmp_path / "sim" / "kubeconfig")
    (tmp_path / "sim" / "sim.json").parent.mkdir()
    (tmp_path / "sim" / "sim.json").write_text("{}")
    assert in_sim_data_dir(tmp_path / "sim" / "kubeconfig")


def test_the_real_control_planes_directory_is_no_sim_data_dir_though_it_holds_a_pki(tmp_path):
    root = tmp_path / "control-plane"
    (root / "pki").mkdir(parents=True)
    (root / "ports.json").write_text("{}")
    assert not in_sim_data_dir(root / "admin.kubeconfig")


def test_a_kubeconfig_that_is_a_directory_is_refused(data, tmp_path):
    (tmp_path / "var" / "sim" / "kubeconfig").mkdir(parents=True)
    errs = errors_of(write_plan(data, tmp_path))
    assert errs == [f"platform.kubeconfig: '../var/sim/kubeconfig' ({tmp_path}/var/sim/kubeconfig) is not a file; "
                    "point it at a kubeconfig file"]


def test_a_plan_without_a_kubeconfig_path_checks_none(data, tmp_path):
    off_the_simulated_cluster(data)
    data["platform"].pop("kubeconfig")
    data["platform"]["kubernetes_conn_id"] = "poc_cluster"
    plan = load_plan(write_plan(data, tmp_path))
    assert not [w for w in plan.warnings if w.startswith("platform.kubeconfig")]


def test_a_missing_scorecard_is_refused_before_the_first_task(data, tmp_path):
    data["report"]["scorecard"] = "reviews/scores.yaml"
    f = write_plan(data, tmp_path)
    (err,) = errors_of(f)
    assert err.startswith(f"report.scorecard: 'reviews/scores.yaml' ({tmp_path}/plans/reviews/scores.yaml) not "
                          "found; write the reviewers' scorecard there"), err
    assert "or remove report.scorecard" in err
    card = tmp_path / "plans" / "reviews" / "scores.yaml"
    card.mkdir(parents=True)
    assert "scores.yaml) is not a file;" in errors_of(f)[0]
    card.rmdir()
    card.write_text("reviewers: []\n")
    assert load_plan(f).report.scorecard == "reviews/scores.yaml"


def test_a_missing_log_outside_the_sim_dir_warns_and_a_directory_is_refused(data, tmp_path):
    data["evidence_sources"]["alert_receiver_record"] = "/var/log/alerts-not-here/alerts.jsonl"
    plan = load_plan(write_plan(data, tmp_path))
    assert ("evidence_sources.alert_receiver_record: '/var/log/alerts-not-here/alerts.jsonl' does not exist yet; "
            "the alert webhook receiver must write it there before the classes that read it run") in plan.warnings
    data["evidence_sources"]["alert_receiver_record"] = str(tmp_path)
    errs = errors_of(write_plan(data, tmp_path))
    assert errs == [f"evidence_sources.alert_receiver_record: '{tmp_path}' is a directory; point it at the file "
                    "the alert webhook receiver writes"]


def test_file_errors_come_with_the_other_errors(data, tmp_path):
    off_the_simulated_cluster(data)
    data["platform"]["kubeconfig"] = "missing.kubeconfig"
    data["tenants"][0]["quota"]["gpus"] = 0
    errs = errors_of(write_plan(data, tmp_path))
    assert errs == ["tenants[0].quota.gpus: expected a positive integer, got 0"], "structure first, as before"
    data["tenants"][0]["quota"]["gpus"] = 16
    data["workloads"][0]["pool"] = "nowhere"
    errs = errors_of(write_plan(data, tmp_path))
    assert [e.split(":")[0] for e in errs] == ["workloads[0].pool", "platform.kubeconfig"]


def test_warnings_reach_the_callers_log(data, tmp_path, caplog):
    f = write_plan(data, tmp_path)
    with caplog.at_level(logging.WARNING, logger="gpupoc.plan"):
        load_plan(f)
    logged = [r.getMessage() for r in caplog.records]
    assert any(m.startswith(f"{f}: platform.kubeconfig: ") for m in logged), logged
