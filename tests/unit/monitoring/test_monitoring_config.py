"""monitoring/config and the shipped monitoring/ files: rendering, and the real tools accept the result."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from gpupoc.exceptions import ConfigError
from gpupoc.monitoring import config as mcfg

SRC = mcfg.monitoring_dir()
DATA = Path(__file__).with_name("data")
needs_promtool = pytest.mark.skipif(shutil.which("promtool") is None,
                                    reason="promtool not installed (scripts/install-monitoring.sh)")
needs_amtool = pytest.mark.skipif(shutil.which("amtool") is None,
                                  reason="amtool not installed (scripts/install-monitoring.sh)")


def _run(*cmd, cwd=None):
    return subprocess.run(list(cmd), capture_output=True, text=True, cwd=cwd, timeout=60)


def test_shipped_files_exist_at_the_project_root():
    for rel in ("prometheus.yml", "alertmanager.yml", "rules/gpupoc.rules.yml"):
        assert (SRC / rel).is_file(), rel


def test_rules_define_the_seven_alerts_with_severity_and_annotations():
    doc = yaml.safe_load((SRC / "rules" / "gpupoc.rules.yml").read_text())
    rules = {r["alert"]: r for g in doc["groups"] for r in g["rules"]}
    assert set(rules) == {"GpuNodeNotReady", "GpuNodeNoExecuteTaint", "GpuXidError", "PodFailed", "ImagePullBackOff",
                          "GpuAllocatedButIdle", "GpuQuotaNearlyUsed"}
    for name, r in rules.items():
        assert r["labels"]["severity"] in ("critical", "warning", "info"), name
        assert r["annotations"]["summary"] and r["annotations"]["description"], name
    assert rules["GpuAllocatedButIdle"]["for"] == "30s"


def test_prometheus_config_points_both_jobs_at_the_simulated_cluster(tmp_path):
    rules = tmp_path / "r.yml"
    cfg = mcfg.render_prometheus(SRC / "prometheus.yml", "http://127.0.0.1:41234", "127.0.0.1:9093", [rules],
                                 "2s", "3s")
    jobs = {j["job_name"]: j for j in cfg["scrape_configs"]}
    assert jobs["dcgm-exporter"]["static_configs"] == [{"targets": ["127.0.0.1:41234"]}]
    assert jobs["dcgm-exporter"]["metrics_path"] == "/metrics"
    assert jobs["kube-state-metrics"]["metrics_path"] == "/metrics/kube-state"
    assert jobs["kube-state-metrics"]["honor_labels"] is True
    assert cfg["global"] == {**cfg["global"], "scrape_interval": "2s", "scrape_timeout": "2s",
                             "evaluation_interval": "3s"}
    assert cfg["rule_files"] == [str(rules)]
    assert cfg["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] == ["127.0.0.1:9093"]


def test_an_exporters_url_takes_both_jobs_at_the_same_paths():
    cfg = mcfg.render_prometheus(SRC / "prometheus.yml", "http://127.0.0.1:40555", "x:1", [], "5s", "5s")
    jobs = {j["job_name"]: j for j in cfg["scrape_configs"]}
    assert {n: (j["static_configs"], j["metrics_path"]) for n, j in jobs.items()} == {
        "dcgm-exporter": ([{"targets": ["127.0.0.1:40555"]}], "/metrics"),
        "kube-state-metrics": ([{"targets": ["127.0.0.1:40555"]}], "/metrics/kube-state")}
    assert "tls_config" not in jobs["dcgm-exporter"]


def test_https_simulated_cluster_gets_scheme_and_tls():
    cfg = mcfg.render_prometheus(SRC / "prometheus.yml", "https://127.0.0.1:6443", "x:1", [], "5s", "5s")
    job = cfg["scrape_configs"][0]
    assert job["scheme"] == "https" and job["tls_config"] == {"insecure_skip_verify": True}


def test_bad_sim_url_and_duration_are_named():
    with pytest.raises(ConfigError, match="127.0.0.1:8080"):
        mcfg.sim_target("127.0.0.1:8080")
    with pytest.raises(ConfigError, match="'5 seconds'"):
        mcfg.duration("5 seconds")


def test_rule_for_overrides_and_rejects_unknown_alerts():
    doc = mcfg.render_rules(SRC / "rules" / "gpupoc.rules.yml", {"GpuAllocatedButIdle": "2m"})
    idle = next(r for g in doc["groups"] for r in g["rules"] if r["alert"] == "GpuAllocatedButIdle")
    assert idle["for"] == "2m"
    with pytest.raises(ConfigError, match="GpuIdle"):
        mcfg.render_rules(SRC / "rules" / "gpupoc.rules.yml", {"GpuIdle": "1m"})
    assert mcfg.parse_rule_for(["GpuXidError=15s"]) == {"GpuXidError": "15s"}
    with pytest.raises(ConfigError, match="NAME=DURATION"):
        mcfg.parse_rule_for(["GpuXidError"])


def test_alertmanager_config_routes_to_the_receiver_with_resolved():
    cfg = mcfg.render_alertmanager(SRC / "alertmanager.yml", "http://127.0.0.1:5555/alerts")
    hook = cfg["receivers"][0]["webhook_configs"][0]
    assert hook == {**hook, "url": "http://127.0.0.1:5555/alerts", "send_resolved": True}
    assert mcfg.seconds(cfg["route"]["group_wait"]) <= 5 and mcfg.seconds(cfg["route"]["group_interval"]) <= 5


def test_alertmanager_config_sends_the_receivers_token_file_and_trusts_its_ca(tmp_path):
    token, ca = tmp_path / "receiver" / "token", tmp_path / "receiver" / "tls" / "ca.crt"
    cfg = mcfg.render_alertmanager(SRC / "alertmanager.yml", "https://127.0.0.1:5555/alerts", token, ca)
    http = cfg["receivers"][0]["webhook_configs"][0]["http_config"]
    assert http == {"authorization": {"type": "Bearer", "credentials_file": str(token)},
                    "tls_config": {"ca_file": str(ca)}}


@needs_promtool
def test_promtool_accepts_the_rendered_prometheus_config_and_rules(tmp_path):
    rules = mcfg.write_yaml(tmp_path / "rules.yml", mcfg.render_rules(SRC / "rules" / "gpupoc.rules.yml",
                                                                      {"GpuNodeNotReady": "1m"}))
    prom = mcfg.write_yaml(tmp_path / "prometheus.yml", mcfg.render_prometheus(
        SRC / "prometheus.yml", "http://127.0.0.1:41234", "127.0.0.1:9093", [rules], "5s", "5s"))
    out = _run("promtool", "check", "config", str(prom))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "7 rules found" in out.stdout


@needs_promtool
def test_promtool_rule_unit_tests_pass(tmp_path):
    shutil.copy(SRC / "rules" / "gpupoc.rules.yml", tmp_path / "gpupoc.rules.yml")
    shutil.copy(DATA / "gpupoc.rules.test.yml", tmp_path / "gpupoc.rules.test.yml")
    out = _run("promtool", "test", "rules", "gpupoc.rules.test.yml", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


@needs_amtool
def test_amtool_accepts_the_rendered_alertmanager_config(tmp_path):
    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("t\n")
    ca.write_text("")
    path = mcfg.write_yaml(tmp_path / "am.yml", mcfg.render_alertmanager(SRC / "alertmanager.yml",
                                                                        "https://127.0.0.1:5555/alerts", token, ca))
    out = _run("amtool", "check-config", str(path))
    assert out.returncode == 0, out.stdout + out.stderr
