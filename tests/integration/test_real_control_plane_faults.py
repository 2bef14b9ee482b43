"""Node failures on the real control plane (Kubernetes v1.37.2, KWOK GPU nodes of the default plan's training
pool), through the fault scenario the fault-recovery class runs: a NoExecute taint (the real taint-eviction
controller), a command stopping the node's heartbeat (``gpupoc controlplane node-stop``: the real node lifecycle
controller marks it unreachable), and ``kubectl drain`` (the real Eviction API, PodDisruptionBudgets
respected). A Deployment's replica on the failed node is replaced on another node. ``sim`` is refused."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
import yaml

from gpupoc.controlplane import BinariesMissing, control_plane_binaries, start_control_plane
from gpupoc.controlplane.nodes import node_names
from gpupoc.controlplane.pod_logs import write_pod_log
from gpupoc.exceptions import ConfigError
from gpupoc.classes.fault_recovery.faults import FaultContext, Scenario, SimNodeInjector, build_injector, run_scenario
from gpupoc.classes.fault_recovery.gpus import api_probe
from gpupoc.pipeline.k8s import ClientFactory
from gpupoc.plan import DEFAULT_PLAN, load_plan, parse_plan
from gpupoc.plan.injector_spec import CommandInjector, DrainInjector, TaintInjector
from gpupoc.plan.model import Pool
from tests.waiting import wait_for

from .real_cluster import REPO

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("control-plane"), pytest.mark.timeout(900)]

PLAN = load_plan(DEFAULT_PLAN)
POOL = Pool.model_validate({**PLAN.pool("training").model_dump(), "nodes": 3, "node_names": []})
NODES = node_names(POOL)
NS = "team-vision"
STEP = 90.0  # one step of the control plane's reaction on a loaded machine (grace period, toleration, eviction)
GRACE = 2  # the pods' termination grace: a KWOK pod stays Terminating this long once deleted
APP = {"app": "fr-replica"}


@pytest.fixture(scope="module")
def cp(tmp_path_factory):
    try:
        control_plane_binaries()
    except BinariesMissing as exc:
        pytest.skip(str(exc))
    plane = start_control_plane(tmp_path_factory.mktemp("cp-faults") / "cp", pools=[POOL], plan=PLAN)
    factory = ClientFactory(str(plane.kubeconfig))
    try:
        plane.run_kubectl("create", "namespace", NS)
        wait_for("the namespace's default ServiceAccount", lambda: plane.run_kubectl(
            "get", "serviceaccount", "default", "-n", NS, check=False).returncode, lambda rc: rc == 0,
            step_seconds=STEP)
        plane.run_kubectl("apply", "-f", "-", input=yaml.safe_dump(replica_deployment()))
        wait_for("the replica Running", lambda: replica(plane), lambda p: p is not None, step_seconds=STEP)
        yield plane, factory
    finally:
        factory.close()
        plane.stop()


def _spec(node_selector: dict, gpus: int) -> dict:
    """A GPU pod's spec on the training pool with the pool's tolerations (unreachable/not-ready: 8 s)."""
    tolerations = [{"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect,
                    "tolerationSeconds": t.toleration_seconds} for t in POOL.tolerations]
    return {"nodeSelector": node_selector, "terminationGracePeriodSeconds": GRACE,
            "tolerations": [{k: v for k, v in t.items() if v is not None} for t in tolerations],
            "containers": [{"name": "base", "image": "gpupoc/virtual:1.0",
                            "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}


def replica_deployment() -> dict:
    """One replica of a service on the pool; it runs until it is deleted (no virtual end)."""
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "fr-replica", "namespace": NS},
            "spec": {"replicas": 1, "selector": {"matchLabels": APP},
                     "template": {"metadata": {"labels": APP}, "spec": _spec(dict(POOL.node_selector), 1)}}}


def victim(name: str, node: str) -> dict:
    """A training pod pinned beside the replica; it runs until it is deleted."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"restartPolicy": "Never", **_spec({"kubernetes.io/hostname": node}, 2)}}


def replica(plane, not_on: str = "") -> dict | None:
    """The Deployment's Running, undeleted pod (on another node than ``not_on``), if any."""
    pods = json.loads(plane.run_kubectl("get", "pods", "-n", NS, "-l", "app=fr-replica", "-o", "json").stdout)
    return next((p for p in pods["items"] if p["status"].get("phase") == "Running"
                 and not p["metadata"].get("deletionTimestamp") and p["spec"].get("nodeName") != not_on), None)


def node(plane, name: str) -> dict:
    return json.loads(plane.run_kubectl("get", "node", name, "-o", "json").stdout)


def ready(n: dict) -> dict:
    return next(c for c in n["status"]["conditions"] if c["type"] == "Ready")


def taints(n: dict) -> set[str]:
    return {f"{t['key']}:{t['effect']}" for t in n["spec"].get("taints") or []}


def pod_gone(plane, name: str) -> bool:
    return plane.run_kubectl("get", "pod", name, "-n", NS, check=False).returncode != 0


@dataclass
class Watched:
    """The plan's injector, with the failed node as the administrator saw it just before its recovery."""

    inner: object
    plane: object
    down: dict = field(default_factory=dict)

    @property
    def method(self) -> str:
        return self.inner.method

    def fail(self, name: str):
        return self.inner.fail(name)

    def recover(self, name: str):
        self.down = node(self.plane, name)
        return self.inner.recover(name)


def scenario(cp, spec, name: str, kind=Scenario.NODE_FAILURE, release_timeout_s: float = 60.0, cleanup=True):
    """The fault scenario on the replica's node: its record, the node as seen before recovery, that node."""
    plane, factory = cp
    target = replica(plane)["spec"]["nodeName"]
    admin = factory("admin")
    injector = Watched(build_injector(spec, admin, kubeconfig=str(plane.kubeconfig), context="admin",
                                      cwd=str(REPO / "plans")), plane)
    write_pod_log(plane, NS, name, ["virtual workload: mode=train", "step=1 loss=0.9"])
    ctx = FaultContext("team-vision", NS, admin, admin, gpu_probes={"kubernetes-api": api_probe(admin)},
                       injector=injector, alerts=lambda s, e: [], release_timeout_s=release_timeout_s)
    rec = run_scenario(ctx, kind, victim(name, target), fail_timeout_s=240, run_before_fail_s=0.5,
                       recover_after_s=1.0, airflow_retries=0, name=name, cleanup=cleanup)
    return rec, injector.down, target


def test_a_noexecute_taint_is_enforced_by_the_real_taint_manager(cp):
    plane = cp[0]
    rec, down, target = scenario(cp, TaintInjector(method="taint"), "fr-taint")
    assert rec.trigger_method == "taint" and "NoExecute taint" in rec.trigger
    assert "gpupoc.io/injected-node-failure:NoExecute" in taints(down) and ready(down)["status"] == "True"
    assert rec.disruption == "DeletionByTaintManager: Taint manager: deleting due to NoExecute taint"
    assert "Normal TaintManagerEviction: Marking for deletion Pod team-vision/fr-taint" in json.loads(rec.events)
    assert not rec.failure_event_missing, "a taint is no node loss: no NodeNotReady event is owed"
    assert rec.gpus_released and rec.gpus_held_at_failure == 2
    [fail, recover] = json.loads(rec.injections)
    assert fail["ok"] and recover["ok"] and "remove taint" in recover["command"]
    moved = wait_for("the replica replaced on another node", lambda: replica(plane, not_on=target),
                     lambda p: p is not None, step_seconds=STEP)
    assert moved["spec"]["nodeName"] in NODES
    assert "gpupoc.io/injected-node-failure:NoExecute" not in taints(node(plane, target)), "recovery removed it"


def test_a_stopped_heartbeat_makes_the_real_node_lifecycle_controller_evict_after_the_toleration(cp):
    plane = cp[0]
    spec = CommandInjector(method="command", fail=f"gpupoc controlplane node-stop {{node}} --dir {plane.root}",
                           recover=f"gpupoc controlplane node-start {{node}} --dir {plane.root}")
    rec, down, target = scenario(cp, spec, "fr-command", release_timeout_s=3.0, cleanup=False)
    [fail, recover] = json.loads(rec.injections)
    assert fail["ok"] and "heartbeat stopped" in fail["detail"], fail["detail"]
    assert recover["ok"] and "heartbeat started" in recover["detail"], recover
    assert (ready(down)["status"], ready(down)["reason"], ready(down)["message"]) == (
        "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
    assert {"node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/unreachable:NoSchedule"} <= taints(down)
    assert rec.disruption == "DeletionByTaintManager: Taint manager: deleting due to NoExecute taint"
    assert "NodeNotReady" in rec.warning_reasons.split(",") and not rec.failure_event_missing
    # nothing confirms the deletion on a lost node: the pod stays Terminating, its GPUs counted, until it returns
    assert rec.phase == "Running" and rec.gpus_released is False
    wait_for(f"{target} Ready again", lambda: node(plane, target), lambda n: ready(n)["status"] == "True"
             and not any(t.startswith("node.kubernetes.io/") for t in taints(n)), step_seconds=STEP,
             describe=lambda n: f"{ready(n)['status']} {sorted(taints(n))}")
    wait_for("the Terminating pod removed once its node is back", lambda: pod_gone(plane, "fr-command"),
             bool, step_seconds=STEP, describe=lambda gone: "still there")
    assert replica(plane, not_on=target) is not None, "the replica was replaced on another node"


def test_a_drain_evicts_through_the_real_eviction_api_and_respects_disruption_budgets(cp):
    plane = cp[0]
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "fr-replica",
              "namespace": NS}, "spec": {"minAvailable": 1, "selector": {"matchLabels": APP}}}
    plane.run_kubectl("apply", "-f", "-", input=yaml.safe_dump(budget))
    wait_for("the budget to allow no disruption", lambda: json.loads(plane.run_kubectl(
        "get", "pdb", "fr-replica", "-n", NS, "-o", "json").stdout).get("status") or {},
        lambda s: s.get("observedGeneration") and s.get("disruptionsAllowed") == 0, step_seconds=STEP)
    held = replica(plane)["metadata"]["name"]
    rec, _, target = scenario(cp, DrainInjector(method="drain", timeout_seconds=15), "fr-drain", Scenario.NODE_DRAIN)
    assert rec.scenario == "fr-drain" and rec.trigger_method == "kubectl-drain"
    assert rec.disruption == "EvictionByEvictionAPI: Eviction API: evicting" and rec.warning_events == 0
    [fail, recover] = json.loads(rec.injections)
    assert not fail["ok"] and ("disruption budget" in fail["detail"] or "global timeout" in fail["detail"]), fail
    assert recover["ok"] and replica(plane)["metadata"]["name"] == held, "the budget kept the replica"
    assert not node(plane, target)["spec"].get("unschedulable"), "uncordoned"
    plane.run_kubectl("patch", "pdb", "fr-replica", "-n", NS, "--type=json", "-p",
                      json.dumps([{"op": "remove", "path": "/spec/minAvailable"},
                                  {"op": "add", "path": "/spec/maxUnavailable", "value": 1}]))
    drain = build_injector(DrainInjector(method="drain", grace_period_seconds=GRACE, timeout_seconds=120), cp[1](
        "admin"), kubeconfig=str(plane.kubeconfig), context="admin")
    done = drain.fail(target)
    assert done.ok and f"node/{target} drained" in done.detail, done
    moved = wait_for("the replica replaced on another node", lambda: replica(plane, not_on=target),
                     lambda p: p is not None, step_seconds=STEP)
    assert moved["spec"]["nodeName"] != target and drain.recover(target).ok


def test_sim_is_refused_on_the_real_control_plane_naming_the_method_and_the_fix(cp):
    plane, factory = cp
    done = SimNodeInjector(factory("admin")).fail(NODES[0])
    assert not done.ok and done.detail.startswith("HTTP 404") and "not the simulated cluster" in done.detail
    assert "gpupoc controlplane node-stop {node}" in done.detail
    data = yaml.safe_load((REPO / "plans" / "default.yaml").read_text(encoding="utf-8"))
    data["platform"]["kubeconfig"] = str(plane.kubeconfig)
    data["platform"].pop("simulated", None)
    with pytest.raises(ConfigError) as info:
        parse_plan(data, "plan.yaml", base_dir=REPO / "plans")
    [err] = [e for e in info.value.errors if e.startswith("test_classes.fault_recovery.injections[4].injector")]
    assert "'sim'" in err and "not the simulated cluster" in err and "node-stop {node}" in err
