from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from gpupoc.demo.services import DemoPaths, sim_config_for, sim_mode_for, write_demo_plan
from gpupoc.exceptions import ConfigError
from gpupoc.pipeline.common import repo_root
from gpupoc.plan import load_plan

NOW = datetime(2026, 11, 30, 8, 30, 15, 123456, tzinfo=timezone.utc)
SIM = {"url": "https://127.0.0.1:4000", "kubeconfig": "/x/var/sim/kubeconfig",
       "kubeconfig_http": "/x/var/sim/kubeconfig-http", "audit_log": "/x/var/sim/audit.log"}
STACK = {"prometheus": {"url": "http://127.0.0.1:9001"}, "alertmanager": {"url": "http://127.0.0.1:9002"},
         "receiver": {"url": "http://127.0.0.1:9003", "record": "/x/var/monitoring/alerts.jsonl"}}


def _write(tmp_path: Path, now=NOW) -> dict:
    paths = DemoPaths(tmp_path)
    out = write_demo_plan(paths, repo_root() / "plans" / "default.yaml", SIM, STACK, now=now)
    assert out == tmp_path / "var" / "demo" / "plan.yaml"
    return yaml.safe_load(out.read_text())


def test_the_demo_plan_points_airflow_at_the_plain_http_kubeconfig_and_the_demo_stack(tmp_path):
    data = _write(tmp_path)
    assert data["platform"]["kubeconfig"] == "/x/var/sim/kubeconfig-http"
    src = data["evidence_sources"]
    assert src["audit_log_path"] == "/x/var/sim/audit.log"
    assert src["prometheus_url"] == "http://127.0.0.1:9001" and src["alertmanager_url"] == "http://127.0.0.1:9002"
    assert src["alert_receiver_record"] == "/x/var/monitoring/alerts.jsonl"


def test_relative_paths_of_the_base_plan_become_absolute(tmp_path):
    data = _write(tmp_path)
    assert data["evidence_root"] == str((repo_root() / "var" / "evidence").resolve())
    plan = load_plan(tmp_path / "var" / "demo" / "plan.yaml")
    assert plan.evidence_root_path == repo_root() / "var" / "evidence"


def test_the_window_keeps_length_and_schedule_but_starts_a_day_after_the_demo(tmp_path):
    base = yaml.safe_load((repo_root() / "plans" / "default.yaml").read_text())["window"]
    w = _write(tmp_path)["window"]
    start, end = datetime.fromisoformat(w["start"]), datetime.fromisoformat(w["end"])
    assert start == NOW.replace(microsecond=0) + timedelta(days=1)
    assert end - start == datetime.fromisoformat(str(base["end"])) - datetime.fromisoformat(str(base["start"]))
    assert w["schedule"] == base["schedule"]


def test_each_demo_moves_the_window_on(tmp_path):
    first = _write(tmp_path)["window"]
    later = NOW + timedelta(hours=3)
    second = _write(tmp_path, later)["window"]
    assert second["start"] == (later.replace(microsecond=0) + timedelta(days=1)).isoformat() != first["start"]


def test_the_reviewers_scorecard_of_the_base_plan_stays_found_from_the_demo_plan(tmp_path):
    base = yaml.safe_load((repo_root() / "plans" / "default.yaml").read_text())
    base["report"]["scorecard"] = "reviews/scores.yaml"
    (tmp_path / "plans" / "reviews").mkdir(parents=True)
    (tmp_path / "plans" / "reviews" / "scores.yaml").write_text("reviewers: []\n")  # a missing one is refused
    (tmp_path / "plans" / "p.yaml").write_text(yaml.safe_dump(base))
    out = write_demo_plan(DemoPaths(tmp_path), tmp_path / "plans" / "p.yaml", SIM, STACK, now=NOW)
    assert yaml.safe_load(out.read_text())["report"]["scorecard"] == str(tmp_path / "plans" / "reviews" / "scores.yaml")


def test_the_demo_starts_the_simulated_cluster_in_the_mode_of_the_plans_adapter(tmp_path):
    plans = repo_root() / "plans"
    assert [sim_mode_for(plans / f"{p}.yaml") for p in ("default", "kueue", "volcano", "kai")] == [
        "kube", "kueue", "volcano", "kai"]
    bad = tmp_path / "plan.yaml"
    bad.write_text("platform: {adapter: slurm}\n")
    with pytest.raises(ConfigError, match="platform.adapter: unknown adapter 'slurm'; one of kube-scheduler"):
        sim_mode_for(bad)


def test_every_adapter_plan_becomes_a_valid_demo_plan(tmp_path):
    for adapter in ("kueue", "volcano", "kai"):
        paths = DemoPaths(tmp_path / adapter)
        out = write_demo_plan(paths, repo_root() / "plans" / f"{adapter}.yaml", SIM, STACK, now=NOW)
        assert load_plan(out).platform.adapter.value == adapter


def test_the_replay_plans_history_stays_found_from_the_demo_plan(tmp_path):
    out = write_demo_plan(DemoPaths(tmp_path), repo_root() / "plans" / "replay.yaml", SIM, STACK, now=NOW)
    replay = yaml.safe_load(out.read_text())["test_classes"]["queue_congestion"]["replay"]
    assert replay["file"] == str(repo_root() / "plans" / "history" / "kalos-300.csv")
    load_plan(out)  # raises ConfigError naming replay.file when the history is not found


def test_the_demo_starts_the_cluster_file_the_plan_names_and_refuses_a_missing_one(tmp_path):
    assert sim_config_for(repo_root() / "plans" / "default.yaml") is None
    assert sim_config_for(repo_root() / "plans" / "scale.yaml") == repo_root() / "plans" / "scale-cluster.yaml"
    bad = tmp_path / "plan.yaml"
    bad.write_text("platform: {adapter: kube-scheduler, simulator_config: nowhere.yaml}\n")
    with pytest.raises(ConfigError, match="platform.simulator_config: no cluster file at .*nowhere.yaml"):
        sim_config_for(bad)


def _running_cluster(paths: DemoPaths) -> dict:
    """What a running ``gpupoc sim serve`` leaves in its data directory, and its sim.json."""
    (paths.sim / "pki").mkdir(parents=True)
    (paths.sim / "sim.json").write_text("{}")
    return {**SIM, "kubeconfig": str(paths.sim / "kubeconfig"), "kubeconfig_http": str(paths.sim / "kubeconfig-http")}


def test_the_from_manifests_kubeconfig_names_the_demos_simulated_cluster_so_its_sim_injector_is_accepted(tmp_path):
    paths = DemoPaths(tmp_path, tmp_path / "state")  # not var/sim: recognised by the cluster's own state
    sim = _running_cluster(paths)
    assert paths.manifests_kubeconfig.parent == paths.sim
    out = write_demo_plan(paths, repo_root() / "plans" / "default.yaml", sim, STACK, now=NOW,
                          kubeconfig=paths.manifests_kubeconfig)
    plan = load_plan(out, kubeconfig_later=True)
    assert plan.platform.kubeconfig == str(paths.manifests_kubeconfig)
    assert [i.injector.method for i in plan.test_classes.fault_recovery.injections
            if i.kind == "node_failure"] == ["sim"], "the default plan's node failure keeps the sim injector"


def test_a_kubeconfig_outside_the_simulated_clusters_data_directory_is_still_refused_the_sim_injector(tmp_path):
    paths = DemoPaths(tmp_path, tmp_path / "state")
    sim = _running_cluster(paths)
    with pytest.raises(ConfigError, match=r"injector.method: 'sim' fails nodes through the simulated cluster's own "
                       r"endpoint, and platform '.*' is not the simulated cluster \(kubeconfig '.*/state/demo/"
                       r"kubeconfig' is not in a simulated cluster's data directory\)"):
        write_demo_plan(paths, repo_root() / "plans" / "default.yaml", sim, STACK, now=NOW,
                        kubeconfig=paths.demo / "kubeconfig")
