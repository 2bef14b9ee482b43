"""Real Prometheus and Alertmanager against the simulated cluster: utilization by namespace from PromQL and the
collectors, an alert reaching the receiver after a node failure (and its resolution), and the not-verified
result once Prometheus is down."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from gpupoc.monitoring import alerts, collectors
from gpupoc.monitoring.promclient import PrometheusClient
from gpupoc.monitoring.results import Window

from .conftest import wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not os.access("/usr/bin/prometheus", os.X_OK) or
                       not os.access("/usr/bin/prometheus-alertmanager", os.X_OK),
                       reason="Prometheus/Alertmanager not installed: run scripts/install-monitoring.sh"),
    pytest.mark.timeout(900),
]

SCRAPE = 2.0
# pod -> (namespace, node, GPUs, reported utilization %, memory MiB, task type)
WORKLOADS = {
    "vision-train-0": ("team-vision", "training-node-1", 2, 80, 40000, "training"),
    "vision-train-1": ("team-vision", "training-node-1", 2, 80, 40000, "training"),
    "nlp-train-0": ("team-nlp", "training-node-2", 1, 30, 20000, "training"),
    "serving-0": ("team-serving", "inference-node-1", 1, 55, 12000, "inference"),
}
EXPECTED_UTIL = {"team-vision": 80, "team-nlp": 30, "team-serving": 55}
FAILED_NODE = "training-node-3"  # no workload of this module runs there


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpupoc.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def stack(sim_server, tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("monitoring")
    up = _cli("stack", "up", "--data-dir", str(data_dir), "--sim-url", sim_server.http_url,
              "--scrape-interval", f"{SCRAPE:g}s", "--evaluation-interval", f"{SCRAPE:g}s",
              "--rule-for", "GpuNodeNotReady=2s")
    assert up.returncode == 0, up.stdout + up.stderr
    state = json.loads((data_dir / "stack.json").read_text())
    state["data_dir"] = data_dir
    yield state
    _cli("stack", "down", "--data-dir", str(data_dir))


@pytest.fixture(scope="module")
def prom(stack) -> PrometheusClient:
    return PrometheusClient(stack["prometheus"]["url"])


def _pod_manifest(name, ns, node, gpus, util, mem, task_type):
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns,
                     "labels": {"gpupoc.io/task-type": task_type, "gpupoc.io/tenant": ns}},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {"kubernetes.io/hostname": node},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [{
                "name": "main", "image": "gpupoc/virtual:1",
                "env": [{"name": "WORKLOAD_DURATION_SECONDS", "value": "90"},
                        {"name": "WORKLOAD_GPU_UTIL", "value": str(util)},
                        {"name": "WORKLOAD_GPU_MEM_MIB", "value": str(mem)}],
                "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
            }],
        },
    }


def _wait(predicate, timeout: float, what: str, interval: float = 0.5):
    return wait_for(what, predicate, timeout, interval)


def _node_action(sim_server, action: str) -> None:
    """`gpupoc sim node fail|recover` as an operator runs it."""
    out = _cli("sim", "node", action, FAILED_NODE, "--kubeconfig", str(sim_server.kubeconfig))
    assert out.returncode == 0, out.stdout + out.stderr


def test_stack_up_is_idempotent_and_status_is_healthy(sim_server, stack):
    again = _cli("stack", "up", "--data-dir", str(stack["data_dir"]), "--sim-url", sim_server.http_url)
    assert again.returncode == 0, again.stderr
    assert f"(pid {stack['prometheus']['pid']})" in again.stdout  # the running stack, not a second one
    status = _wait(lambda: _status_if_targets_up(stack), 20, "both scrape targets up")
    assert {t["job"] for t in status["targets"]} == {"dcgm-exporter", "kube-state-metrics"}


def test_stack_up_follows_a_cluster_that_moved(sim_server, stack):
    """`stack up` on a running stack with another cluster URL rewrites the targets and reloads Prometheus
    (here: the same cluster's TLS listener, then back to plain HTTP)."""
    for url in (sim_server.url, sim_server.http_url):
        out = _cli("stack", "up", "--data-dir", str(stack["data_dir"]), "--sim-url", url)
        assert out.returncode == 0, out.stderr
        assert f"(pid {stack['prometheus']['pid']})" in out.stdout

        def moved(url=url):
            st = _status_if_targets_up(stack)
            return st if st and all(t["url"].startswith(url) for t in st["targets"]) else None

        _wait(moved, 20, f"scrape targets up at {url}")


def _status_if_targets_up(stack):
    out = _cli("stack", "status", "--data-dir", str(stack["data_dir"]), "--json")
    st = json.loads(out.stdout)
    if out.returncode == 0 and st["targets"] and all(t["health"] == "up" for t in st["targets"]):
        return st
    return None


def test_namespace_utilization_matches_what_workloads_reported(sim_server, stack, prom):
    from kubernetes import client

    api = client.CoreV1Api(sim_server.client("admin"))
    for name, (ns, node, gpus, util, mem, task) in WORKLOADS.items():
        api.create_namespaced_pod(ns, _pod_manifest(name, ns, node, gpus, util, mem, task))

    def all_running():
        phases = {n: api.read_namespaced_pod(n, WORKLOADS[n][0]).status.phase for n in WORKLOADS}
        return phases if set(phases.values()) == {"Running"} else None

    _wait(all_running, 60, "the workloads to run")
    start = datetime.now(timezone.utc) + timedelta(seconds=2 * SCRAPE)  # skip the start-up edge
    # PromQL as an operator would type it, once every namespace has samples
    query = 'avg by (namespace) (DCGM_FI_DEV_GPU_UTIL{namespace!=""})'
    _wait(lambda: len(prom.query(query)) == 3, 30, "utilization samples for 3 namespaces")
    time.sleep(8 * SCRAPE)
    end = datetime.now(timezone.utc)
    promql = {r["metric"]["namespace"]: float(r["value"][1]) for r in prom.query(query)}
    assert promql == pytest.approx(EXPECTED_UTIL, abs=1), promql

    window = Window(start, end, SCRAPE)
    samples = collectors.collect_gpu_samples(prom, window)
    assert samples.verified, samples.reason
    by_ns = collectors.utilization_by_namespace(samples)
    assert by_ns.verified, by_ns.reason
    rows = by_ns.frame.set_index("namespace")
    for ns, expected in EXPECTED_UTIL.items():
        assert rows.loc[ns, "util_mean_allocated"] == pytest.approx(expected, abs=3), (ns, rows.loc[ns].to_dict())
        assert rows.loc[ns, "used_ratio"] == pytest.approx(expected / 100, abs=0.03)
    assert rows.loc["team-vision", "gpus"] == 4 and rows.loc["team-nlp", "gpus"] == 1
    assert rows.loc["team-vision", "mem_used_mib_mean"] == pytest.approx(40000, abs=1)
    # allocated GPU-hours: GPUs x window length (within one sample per GPU of the window edges)
    span_h = (end - start).total_seconds() / 3600
    assert rows.loc["team-vision", "allocated_gpu_hours"] == pytest.approx(4 * span_h, rel=0.2)

    print("\n" + by_ns.frame[["namespace", "gpus", "samples", "util_mean_allocated", "allocated_gpu_hours",
                               "used_gpu_hours"]].to_string(index=False))
    by_type = collectors.utilization_by_task_type(samples)
    assert by_type.verified, by_type.reason
    types = by_type.frame.set_index("task_type")["util_mean_allocated"].to_dict()
    assert types["inference"] == pytest.approx(55, abs=3)
    assert types["training"] == pytest.approx((80 * 4 + 30) / 5, abs=3)
    pools = collectors.utilization_by_pool(samples).frame.set_index("pool")
    assert set(pools.index) == {"training", "inference"}
    assert pools.loc["training", "gpus"] == 24


def test_node_failure_alert_reaches_the_receiver_and_its_resolution_is_kept(sim_server, stack, prom):
    record = Path(stack["receiver"]["record"])
    t0 = datetime.now(timezone.utc)
    _node_action(sim_server, "fail")

    def fired():
        res = alerts.alerts_from_receiver(record, Window(t0, datetime.now(timezone.utc) + timedelta(seconds=1)))
        if not res.verified:
            return None
        df = res.frame
        hit = df[(df["status"] == "firing") & (df["alertname"].isin(["GpuNodeNotReady", "GpuXidError"])) &
                 ((df["node"] == FAILED_NODE) | (df["hostname"] == FAILED_NODE))]
        return set(hit["alertname"]) or None

    names = _wait(fired, 60, f"GpuNodeNotReady or GpuXidError for {FAILED_NODE} in {record}", interval=1)
    print(f"\nnode fail -> {sorted(names)} firing at the receiver after "
          f"{(datetime.now(timezone.utc) - t0).total_seconds():.1f}s")
    assert names & {"GpuNodeNotReady", "GpuXidError"}

    def in_history():
        # the range query's step grid must reach past the evaluation that wrote ALERTS: ask again until it does
        res = alerts.alerts_from_prometheus(prom, Window(t0 - timedelta(seconds=5), datetime.now(timezone.utc), SCRAPE))
        if not res.verified:
            return None
        return set(res.frame[res.frame["alertstate"] == "firing"]["alertname"]) & names or None

    assert _wait(in_history, 30, f"{sorted(names)} firing in Prometheus' ALERTS history", interval=1)

    _node_action(sim_server, "recover")

    def resolved():
        res = alerts.alerts_from_receiver(record, Window(t0, datetime.now(timezone.utc) + timedelta(seconds=1)))
        df = res.frame
        return set(df[(df["status"] == "resolved") & df["alertname"].isin(names)]["alertname"]) or None

    t1 = datetime.now(timezone.utc)
    _wait(resolved, 60, "the resolved notification in the receiver record", interval=1)
    print(f"node recover -> resolved at the receiver after {(datetime.now(timezone.utc) - t1).total_seconds():.1f}s")


def test_only_alertmanager_can_write_the_alert_record(stack):
    """The stack's receiver serves TLS and requires the token Alertmanager's http_config carries; a forged alert
    without it is refused, counted and never recorded; the token stays out of configs, logs and the record."""
    import ssl
    import urllib.error
    import urllib.request

    import yaml

    from gpupoc.monitoring.intake_auth import refused

    rec = stack["receiver"]
    assert rec["url"].startswith("https://")
    token = Path(rec["token_file"]).read_text().strip()
    am = yaml.safe_load(Path(stack["alertmanager"]["config"]).read_text())
    http = am["receivers"][0]["webhook_configs"][0]["http_config"]
    assert http == {"authorization": {"type": "Bearer", "credentials_file": rec["token_file"]},
                    "tls_config": {"ca_file": rec["ca_file"]}}
    forged = {"version": "4", "status": "firing", "receiver": "gpupoc-webhook", "alerts": [
        {"status": "firing", "labels": {"alertname": "GpuNodeNotReady", "node": "forged-node"}}]}
    req = urllib.request.Request(rec["url"] + "/alerts", data=json.dumps(forged).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    before = refused(Path(rec["record"])).refused
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10, context=ssl.create_default_context(cafile=rec["ca_file"]))
    assert err.value.code == 401 and refused(Path(rec["record"])).refused == before + 1
    record = Path(rec["record"])
    assert "forged-node" not in (record.read_text() if record.exists() else "")
    kept = [p for p in Path(stack["data_dir"]).rglob("*") if p.is_file() and p.suffix in (".yml", ".log", ".json",
                                                                                          ".jsonl")]
    assert kept and not [str(p) for p in kept if token in p.read_text(errors="replace")], "the token leaked"


def test_prometheus_down_gives_a_not_verified_result(sim_server, stack, prom):
    from kubernetes import client

    ns, node, gpus, util, mem, task = next(iter(WORKLOADS.values()))
    client.CoreV1Api(sim_server.client("admin")).create_namespaced_pod(
        ns, _pod_manifest("while-prometheus-up", ns, node, 1, util, mem, task))
    # up: verified once Prometheus has scraped the exporter (this test may be the first of its stack)
    def verified_window():
        w = Window.last(60, step=SCRAPE)
        return w if collectors.utilization_by_namespace(prom, w).verified else None

    window = _wait(verified_window, 60, "utilization verified while Prometheus is up", interval=1)
    down = _cli("stack", "down", "--data-dir", str(stack["data_dir"]))
    assert down.returncode == 0 and "prometheus (pid" in down.stdout
    res = collectors.utilization_by_namespace(prom, window)
    assert not res.verified and res.frame.empty
    assert res.source.startswith(stack["prometheus"]["url"]) and "unreachable" in res.reason
    status = _cli("stack", "status", "--data-dir", str(stack["data_dir"]))
    assert status.returncode == 1 and "down" in status.stdout
