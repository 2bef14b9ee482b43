"""The fault-recovery class passes on the simulated cluster with the injectors a real cluster supports: a
NoExecute taint, and a command that stops the node's kubelet (``gpupoc sim node stop-kubelet``), with real
Prometheus, Alertmanager and the alert receiver telling operators."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from gpupoc.pipeline.common import repo_root

from .class_runner import run_class
from .conftest import launch

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not os.access("/usr/bin/prometheus", os.X_OK) or
                       not os.access("/usr/bin/prometheus-alertmanager", os.X_OK),
                       reason="Prometheus/Alertmanager not installed: run scripts/install-monitoring.sh"),
    pytest.mark.timeout(900),
]
KUBELET = {"method": "command", "fail": "gpupoc sim node stop-kubelet {node} --kubeconfig {kubeconfig}",
           "recover": "gpupoc sim node start-kubelet {node} --kubeconfig {kubeconfig}"}


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpupoc.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sim = launch(tmp_path_factory.mktemp("sim"))
    data_dir = tmp_path_factory.mktemp("monitoring")
    up = _cli("stack", "up", "--data-dir", str(data_dir), "--sim-url", sim.http_url, "--scrape-interval", "2s",
              "--evaluation-interval", "2s", "--rule-for", "GpuNodeNotReady=2s")
    assert up.returncode == 0, up.stdout + up.stderr
    stack = json.loads((data_dir / "stack.json").read_text())
    yield sim, stack
    _cli("stack", "down", "--data-dir", str(data_dir))
    sim.stop()


def fault_plan(tmp: Path, sim, stack) -> Path:
    plan = yaml.safe_load((repo_root() / "plans" / "default.yaml").read_text())
    plan["platform"]["kubeconfig"] = str(sim.kubeconfig)
    plan["evidence_root"] = str(tmp / "evidence")
    plan["evidence_sources"] = {"prometheus_url": stack["prometheus"]["url"],
                                "alertmanager_url": stack["alertmanager"]["url"],
                                "alert_receiver_record": stack["receiver"]["record"],
                                "audit_log_path": str(sim.audit_log)}
    start = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=1)
    plan["window"].update(start=start.isoformat(), end=(start + timedelta(days=7)).isoformat())
    base = {"kind": "node_failure", "workload": "train-long", "tenant": "team-vision", "pool": "training",
            "at_seconds": 3}
    plan["test_classes"]["fault_recovery"]["injections"] = [
        {**base, "name": "node-taint", "recover_after_seconds": 10, "injector": "taint"},
        {**base, "name": "node-kubelet", "recover_after_seconds": 25,
         "fail_timeout_seconds": 45, "injector": KUBELET},
    ]
    path = tmp / "plan.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


def test_the_fault_recovery_class_passes_with_the_taint_and_kubelet_stop_injectors(cluster, tmp_path):
    sim, stack = cluster
    run = run_class(fault_plan(tmp_path, sim, stack), "fault_recovery", "injectors__taint_command",
                    probes=("inject_faults", "fail_service_nodes"))
    assert not run.errors, run.errors
    records = {r["scenario"]: r for r in json.loads((run.run_dir / "files" / "fault_records.json").read_text())}
    taint, kubelet = records["node-taint"], records["node-kubelet"]
    assert taint["trigger_method"] == "taint" and taint["disruption"].startswith("DeletionByTaintManager")
    assert "GpuNodeNoExecuteTaint" in taint["alerts"], taint["alerts"]
    assert kubelet["trigger_method"] == "command" and "NodeNotReady" in kubelet["warning_reasons"]
    assert kubelet["status_reason"] == "NodeLost" and kubelet["user_log_readable_after"] is True
    for rec in (taint, kubelet):
        assert rec["verified"] and not rec["findings"], (rec["scenario"], rec["reason"], rec["findings"])
        assert rec["gpus_released"] and rec["release_s"] <= 30, rec
    failing = {c: v for c, v in run.verdicts.items() if v != "pass"}
    assert run.verdicts and not failing, f"fault recovery checks not passing: {failing}"
