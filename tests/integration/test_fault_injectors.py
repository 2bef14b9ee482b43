"""Each node injector against the simulated cluster, through the fault scenario the class runs: the
simulator's endpoint, a command stopping the node's kubelet (``gpupoc sim node stop-kubelet``), a NoExecute
taint, and ``kubectl drain`` (an eviction, reported as the ``node_drain`` scenario)."""

from __future__ import annotations

import json
import time

import pytest

from gpupoc.classes.fault_recovery.faults import FaultContext, Scenario, build_injector, run_scenario
from gpupoc.classes.fault_recovery.gpus import api_probe, dcgm_probe, url_fetcher
from gpupoc.pipeline.k8s import ClientFactory
from gpupoc.plan.injector_spec import CommandInjector, DrainInjector, SimInjector, TaintInjector

from .conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]
NS = "team-vision"
TOLERATIONS = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
               {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                "tolerationSeconds": 3}]


def victim(name: str, node: str) -> dict:
    """A training step that takes its grace period to stop (it ignores SIGTERM), as real jobs do."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"restartPolicy": "Never", "tolerations": TOLERATIONS, "terminationGracePeriodSeconds": 30,
                     "nodeSelector": {"kubernetes.io/hostname": node},
                     "containers": [{"name": "base", "image": "busybox:1.36",
                                     "command": ["sh", "-c", "trap '' TERM; echo step=1; sleep 120"],
                                     "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}


@pytest.fixture(scope="module")
def cluster(sim_server):
    factory = ClientFactory(str(sim_server.kubeconfig_http))
    yield sim_server, factory
    factory.close()


def scenario(cluster, spec, node: str, name: str, scenario=Scenario.NODE_FAILURE):
    sim, factory = cluster
    admin = factory("admin")
    injector = build_injector(spec, admin, kubeconfig=str(sim.kubeconfig), context="admin", cwd=str(sim.data_dir))
    ctx = FaultContext("team-vision", NS, factory("team-vision"), admin, injector=injector, alerts=lambda s, e: [],
                       gpu_probes={"api": api_probe(admin), "dcgm": dcgm_probe(url_fetcher(sim.http_url + "/metrics"))},
                       release_timeout_s=20)
    return run_scenario(ctx, scenario, victim(name, node), fail_timeout_s=40, run_before_fail_s=0.5,
                        recover_after_s=1.0, airflow_retries=0, name=name)


def node(cluster, name: str) -> dict:
    return cluster[1]("admin").call("GET", f"/api/v1/nodes/{name}").body


def ready(n: dict) -> str:
    return next(c["status"] for c in n["status"]["conditions"] if c["type"] == "Ready")


def audited(sim, pod: str, verb: str) -> list[dict]:
    return [e for e in sim.audit_events() if e["verb"] == verb and (e.get("objectRef") or {}).get("name") == pod]


def test_the_sim_endpoint_fails_the_node_and_the_victim_goes_after_its_toleration(cluster):
    rec = scenario(cluster, SimInjector(), "training-node-1", "inj-sim")
    assert rec.trigger_method == "sim-endpoint" and rec.trigger == "the pod's node fails mid-run"
    assert (rec.phase, rec.status_reason) == ("Failed", "NodeLost") and "NodeNotReady" in rec.warning_reasons
    assert rec.disruption.startswith("DeletionByTaintManager")
    assert any("TaintManagerEviction" in e for e in json.loads(rec.events))
    assert rec.gpus_released and rec.gpus_held_at_failure == 2
    assert "recover node training-node-1" in rec.recovery_action
    wait_for("training-node-1 Ready again", lambda: ready(node(cluster, "training-node-1")) == "True")


def test_a_command_stopping_the_kubelet_makes_the_node_unreachable_as_a_real_one(cluster):
    spec = CommandInjector(method="command", fail="gpupoc sim node stop-kubelet {node} --kubeconfig {kubeconfig}",
                           recover="gpupoc sim node start-kubelet {node} --kubeconfig {kubeconfig}")
    rec = scenario(cluster, spec, "training-node-2", "inj-command")
    [fail, recover] = json.loads(rec.injections)
    assert fail["method"] == "command" and fail["ok"] and "kubelet stopped (Ready=True)" in fail["detail"]
    assert recover["ok"] and "kubelet started" in recover["detail"]
    assert rec.phase == "Failed" and "NodeNotReady" in rec.warning_reasons and not rec.failure_event_missing
    metrics = url_fetcher(cluster[0].http_url + "/metrics")()
    assert 'Hostname="training-node-2"' in metrics and not any(
        'Hostname="training-node-2"' in line and line.startswith("DCGM_FI_DEV_XID_ERRORS") and not line.endswith(" 0")
        for line in metrics.splitlines()), "a stopped kubelet leaves the GPUs healthy (no XID)"
    wait_for("training-node-2 Ready again", lambda: ready(node(cluster, "training-node-2")) == "True")


def test_a_taint_evicts_as_the_taint_manager_while_the_node_stays_ready(cluster):
    sim = cluster[0]
    rec = scenario(cluster, TaintInjector(method="taint"), "training-node-3", "inj-taint")
    assert rec.trigger_method == "taint" and "NoExecute taint" in rec.trigger
    assert not rec.failure_event_missing, "a taint is no node loss: no NodeNotReady event is owed"
    assert any("TaintManagerEviction: Marking for deletion Pod team-vision/inj-taint" in e
               for e in json.loads(rec.events))
    assert rec.disruption == "DeletionByTaintManager: Taint manager: deleting due to NoExecute taint"
    [patch] = [e for e in audited(sim, "inj-taint", "patch") if e["objectRef"].get("subresource") == "status"]
    assert patch["user"]["username"] == "system:serviceaccount:kube-system:node-controller"
    assert rec.gpus_released
    n = node(cluster, "training-node-3")
    assert ready(n) == "True" and not any(t["key"] == "gpupoc.io/injected-node-failure"
                                          for t in n["spec"].get("taints") or []), "recovery removed the taint"


def test_a_drain_is_an_eviction_through_the_eviction_api_not_a_failure(cluster):
    sim = cluster[0]
    rec = scenario(cluster, DrainInjector(method="drain", grace_period_seconds=1, timeout_seconds=60),
                   "inference-node-1", "inj-drain", Scenario.NODE_DRAIN)
    assert rec.scenario == "inj-drain" and rec.trigger_method == "kubectl-drain"
    assert "planned maintenance: an eviction through the Eviction API, not a failure" in rec.trigger
    [fail, _] = json.loads(rec.injections)
    assert fail["ok"] and "node/inference-node-1 cordoned" in fail["detail"]
    assert not rec.failure_event_missing and rec.warning_events == 0
    assert rec.disruption == "EvictionByEvictionAPI: Eviction API: evicting"
    [evict] = [e for e in audited(sim, "inj-drain", "create") if e["objectRef"].get("subresource") == "eviction"]
    assert evict["user"]["username"] == "kubernetes-admin" and evict["responseStatus"]["code"] == 201
    assert rec.gpus_released
    wait_for("inference-node-1 schedulable again", lambda: not node(cluster, "inference-node-1")["spec"].get(
        "unschedulable"))
