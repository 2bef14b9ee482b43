"""Helpers of the real-cluster tests: an empty simulated cluster given a plan's manifests through its API with
real kubectl, the identities' kubeconfig minted with ``kubectl create token``, and the preflight CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.sim.config import emptied, load_cluster_config, shipped_config

from .conftest import SimServer, launch, wait_for

REPO = Path(__file__).resolve().parents[2]


# The planted cross-tenant read of the preflight tests: a RoleBinding letting team-vision's runner read team-nlp's pods.
CROSS_TENANT_READ = """
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: team-nlp}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: vision-reads-nlp, namespace: team-nlp}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects: [{kind: ServiceAccount, name: runner, namespace: team-vision}]
"""


def tenant_role_without_pods_log(role_yaml: str) -> str:
    """team-nlp's tenant Role as ``kubectl get -o yaml`` printed it, without its ``pods/log`` rule, for replace."""
    role = yaml.safe_load(role_yaml)
    role["rules"] = [r for r in role["rules"] if r["resources"] != ["pods/log"]]
    role["metadata"] = {"name": "gpupoc-tenant", "namespace": "team-nlp"}
    return yaml.safe_dump(role)


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpupoc.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=str(REPO))


def empty_config(path: Path, mode: SchedulerMode = SchedulerMode.KUBE) -> Path:
    """A cluster config with the shipped config's nodes only (``empty: true``)."""
    cfg = emptied(load_cluster_config(shipped_config(mode)))
    path.write_text(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False), encoding="utf-8")
    return path


def write_plan(path: Path, base: str, kubeconfig: Path, sim: SimServer, evidence: Path, **sources) -> Path:
    """``plans/<base>`` pointed at this cluster: its kubeconfig, the cluster's audit log, an evidence root."""
    data = yaml.safe_load((REPO / "plans" / base).read_text(encoding="utf-8"))
    data["platform"]["kubeconfig"] = str(kubeconfig)
    data["platform"]["simulated"] = True  # the minted kubeconfig lies outside the cluster's data directory
    data["evidence_root"] = str(evidence)
    data["evidence_sources"] = {"audit_log_path": str(sim.audit_log), **sources}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@dataclass
class PreparedCluster:
    """A simulated cluster that started empty and was given the plan's manifests and identities."""

    sim: SimServer
    plan: Path
    kubeconfig: Path
    manifests: str
    tmp: Path
    stack_dir: Path | None = None

    def stop(self) -> None:
        if self.stack_dir is not None:
            cli("stack", "down", "--data-dir", str(self.stack_dir))
        self.sim.stop()

    def preflight(self, *args: str, plan: Path | None = None) -> tuple[int, dict]:
        stack = self.stack_dir or self.tmp / "no-monitoring-stack"  # never the repository's var/monitoring
        res = cli("preflight", "--plan", str(plan or self.plan), "--json", "--stack-dir", str(stack), *args)
        try:
            return res.returncode, json.loads(res.stdout)
        except ValueError:
            raise AssertionError(f"preflight printed no JSON (exit {res.returncode}): {res.stdout}{res.stderr}")


def _has_series(url: str, metric: str) -> bool:
    import urllib.parse
    import urllib.request

    try:
        with urllib.request.urlopen(f"{url}/api/v1/query?query={urllib.parse.quote(metric)}", timeout=5) as r:
            return bool(json.loads(r.read())["data"]["result"])
    except (OSError, ValueError, KeyError):
        return False


def start_stack(sim: SimServer, data_dir: Path) -> dict:
    """``gpupoc stack up`` against the cluster: the evidence sources of its Prometheus and Alertmanager."""
    up = cli("stack", "up", "--data-dir", str(data_dir), "--sim-url", sim.http_url, "--scrape-interval", "2s")
    assert up.returncode == 0, up.stdout + up.stderr
    state = json.loads((data_dir / "stack.json").read_text())
    # a user runs the preflight against a Prometheus that has scraped the cluster; a loaded machine may
    # take several scrape intervals for the first one, so the series the preflight asks for are awaited
    url = state["prometheus"]["url"]
    wait_for(f"the first scrape of the cluster's GPU metrics by {url}", lambda: _has_series(url, "DCGM_FI_DEV_GPU_UTIL")
             and _has_series(url, "kube_node_status_capacity"), timeout=180)
    return {"prometheus_url": url, "alertmanager_url": state["alertmanager"]["url"],
            "alert_receiver_record": state["receiver"]["record"]}


def prepare(tmp: Path, base_plan: str = "default.yaml", mode: SchedulerMode = SchedulerMode.KUBE,
            monitoring: bool = False) -> PreparedCluster:
    """Empty cluster -> ``gpupoc cluster manifests`` -> ``kubectl apply`` -> ``gpupoc cluster kubeconfig``
    (with ``monitoring``, the local stack scrapes the cluster and the plan names it)."""
    sim = launch(tmp / "sim", config=empty_config(tmp / "empty.yaml", mode))
    stack_dir = tmp / "monitoring" if monitoring else None
    cluster = PreparedCluster(sim, tmp / "plan.yaml", tmp / "kubeconfig", "", tmp, None)
    try:
        sources = start_stack(sim, stack_dir) if stack_dir else {}
        cluster.stack_dir = stack_dir
        write_plan(cluster.plan, base_plan, cluster.kubeconfig, sim, tmp / "evidence", **sources)
        rendered = cli("cluster", "manifests", "--plan", str(cluster.plan))
        assert rendered.returncode == 0, rendered.stderr
        cluster.manifests = rendered.stdout
        applied = sim.kubectl("apply", "-f", "-", input=rendered.stdout)
        assert applied.returncode == 0, f"kubectl apply refused the manifests: {applied.stderr}"
        minted = cli("cluster", "kubeconfig", "--plan", str(cluster.plan), "--admin-kubeconfig",
                     str(sim.kubeconfig), "--admin-context", "admin")
        assert minted.returncode == 0, minted.stdout + minted.stderr
    except BaseException:
        cluster.stop()  # a failed preparation leaves no server behind
        raise
    return cluster


def lines(report: dict, check: str, status: str = "failed") -> list[dict]:
    return [r for r in report["results"] if r["check"] == check and r["status"] == status]
