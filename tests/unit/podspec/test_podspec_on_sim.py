"""On the simulated cluster: the built pods are admitted as their tenant, held by the gate, and released."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import pytest

from gpupoc.plan import class_items
from gpupoc.podspec import build_pod, release_gate_json_patch, release_gate_patch

pytestmark = pytest.mark.integration

_CONFTEST = Path(__file__).resolve().parents[2] / "integration" / "conftest.py"


def _launch():
    spec = importlib.util.spec_from_file_location("gpupoc_integration_conftest", _CONFTEST)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod.launch


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    server = _launch()(tmp_path_factory.mktemp("sim"))
    yield server
    server.stop()


def body(pod):
    from kubernetes.client import ApiClient

    return ApiClient().sanitize_for_serialization(pod)


def test_wave_is_held_until_released_then_runs(sim, plan):
    from kubernetes import client

    apis = {t.name: client.CoreV1Api(sim.client(t.kube_context)) for t in plan.tenants}
    admin = client.CoreV1Api(sim.client("admin"))
    items = class_items(plan, "queue_congestion")
    for it in items:
        pod = build_pod(plan.workload(it.workload), plan.tenant(it.tenant), plan, run_id="sim-test",
                        test_class="queue_congestion", wave_gate=True, name=it.name,
                        priority_class=it.priority_class)
        apis[it.tenant].create_namespaced_pod(plan.tenant(it.tenant).namespace, body(pod))
    time.sleep(1.5)
    for it in items:
        p = admin.read_namespaced_pod(it.name, plan.tenant(it.tenant).namespace)
        assert p.spec.node_name is None, f"{it.name} was scheduled while gated"
        cond = {c.type: c for c in p.status.conditions}["PodScheduled"]
        assert (cond.status, cond.reason) == ("False", "SchedulingGated")
        assert p.spec.priority == plan.priority_value(it.priority_class)
    for k, it in enumerate(items):
        ns = plan.tenant(it.tenant).namespace
        if k % 2:
            admin.patch_namespaced_pod(it.name, ns, release_gate_patch())
        else:
            gates = admin.read_namespaced_pod(it.name, ns).spec.scheduling_gates
            admin.patch_namespaced_pod(it.name, ns, release_gate_json_patch(gates))
    # until the bound set has held for 3 s after the first binding; the first may take a loaded machine
    # many scheduler passes, so only its absence for 120 s fails. The wave holds a critical pod that may
    # preempt a lower-priority one in a full pool: the victim is deleted, as kube-scheduler's preemption does.
    deadline, stable_since = time.monotonic() + 120, time.monotonic()
    bound: set[str] = set()
    while not bound or time.monotonic() - stable_since < 3:
        assert bound or time.monotonic() < deadline, "no released pod was scheduled within 120 s"
        now_bound = _bound_pods(admin, plan, items)
        if now_bound != bound:
            bound, stable_since = now_bound, time.monotonic()
        time.sleep(0.5)
    # the wave asks more GPUs than the pools hold: some pods run, the rest wait, no pool is overcommitted
    assert 0 < len(bound) < len(items), sorted(bound)
    for pool in plan.pools:
        held = sum(plan.workload(i.workload).gpus for i in items if i.name in bound
                   and plan.workload(i.workload).pool == pool.name)
        assert held <= pool.capacity_gpus, (pool.name, held)


def _bound_pods(admin, plan, items) -> set[str]:
    """The wave's pods bound to a node of their pool now; a preempted (deleted) pod is not bound."""
    from kubernetes.client.exceptions import ApiException

    bound = set()
    for it in items:
        try:
            p = admin.read_namespaced_pod(it.name, plan.tenant(it.tenant).namespace)
        except ApiException as exc:
            assert exc.status == 404, exc
            continue
        assert not p.spec.scheduling_gates
        if p.spec.node_name:
            assert p.spec.node_name in plan.pool(plan.workload(it.workload).pool).node_names
            bound.add(it.name)
    return bound


def test_release_keeps_another_controllers_gate(sim, plan):
    from kubernetes import client

    api = client.CoreV1Api(sim.client("team-nlp"))
    admin = client.CoreV1Api(sim.client("admin"))
    cpu_only = plan.workload("v-train-1g").model_copy(update={"gpus": 0})  # the wave holds the GPU quota
    for name, patch in (("gate-smp", "strategic"), ("gate-json", "json")):
        pod = body(build_pod(cpu_only, plan.tenant("team-nlp"), plan, run_id="sim-test",
                             test_class="audit_trail", wave_gate=True, name=name))
        pod["spec"]["schedulingGates"].insert(0, {"name": "example.com/hold"})
        api.create_namespaced_pod("team-nlp", pod)
        if patch == "strategic":
            admin.patch_namespaced_pod(name, "team-nlp", release_gate_patch())
        else:
            gates = admin.read_namespaced_pod(name, "team-nlp").spec.scheduling_gates
            admin.patch_namespaced_pod(name, "team-nlp", release_gate_json_patch(gates))
        left = admin.read_namespaced_pod(name, "team-nlp").spec.scheduling_gates
        assert [g.name for g in left] == ["example.com/hold"], patch


def test_a_wave_beyond_quota_is_refused_at_creation(sim, plan):
    """Why the plan check insists waves fit quotas: gated pods count against the quota."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    api = client.CoreV1Api(sim.client("team-vision"))
    quota = plan.tenant("team-vision").quota.gpus
    refused = None
    for k in range(quota // 8 + 1):  # gated 8-GPU pods until the quota (16) is exceeded
        pod = body(build_pod(plan.workload("v-train-8g"), plan.tenant("team-vision"), plan, run_id="sim-test",
                             test_class="queue_congestion", wave_gate=True, name=f"over-quota-8g-{k}"))
        try:
            api.create_namespaced_pod("team-vision", pod)
        except ApiException as exc:
            refused = exc
            break
    assert refused is not None, "a gated wave beyond the quota was admitted"
    assert refused.status == 403 and "exceeded quota: team-vision-gpu" in refused.body
