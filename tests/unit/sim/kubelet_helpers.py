"""Helpers shared by the kubelet and nodes tests: an in-process cluster, pods bound by hand, a driver."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Callable

from gpupoc.sim.bootstrap import bootstrap
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import load_cluster_config
from gpupoc.sim.admission import default_tolerations
from gpupoc.sim.controllers.kubelet import Kubelet
from gpupoc.sim.faults import Fault

NS = "team-vision"
NODE = "training-node-1"
WORKLOAD = "gpupoc/workload:1.0"
VIRTUAL = "gpupoc/virtual:1.0"


def make_state(tmp_path: Path, faults: tuple[Fault, ...] = (), **timing) -> ClusterState:
    cfg = load_cluster_config()
    cfg = cfg.model_copy(update={"timing": cfg.timing.model_copy(update={
        "termination_grace_seconds": 1.0, "image_backoff_seconds": 0.3, "node_monitor_grace_seconds": 0.5,
        **timing})})
    state = ClusterState(cfg, tmp_path, faults=frozenset(faults))
    bootstrap(state)
    return state


def pod_obj(name: str, image: str, env: dict[str, str] | None = None, gpus: int = 0, node: str | None = NODE,
            restart_policy: str = "Never", tolerations: list[dict] | None = None, **container) -> dict:
    """A pod as the API server stores it, with the default not-ready/unreachable tolerations (300 s) unless
    ``tolerations`` gives its own."""
    c = {"name": "base", "image": image, "env": [{"name": k, "value": str(v)} for k, v in (env or {}).items()],
         "resources": {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}, **container}
    spec = {"containers": [c], "restartPolicy": restart_policy, "terminationGracePeriodSeconds": 30,
            "schedulerName": "default-scheduler", "tolerations": default_tolerations(list(tolerations or []))}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": NS}, "spec": spec,
            "status": {"phase": "Pending", "qosClass": "BestEffort",
                       "conditions": [{"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                                       "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}


def unreachable_for(seconds: int | None) -> list[dict]:
    """A toleration of the unreachable NoExecute taint for ``seconds`` (None: forever)."""
    tol = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}
    return [tol if seconds is None else {**tol, "tolerationSeconds": seconds}]


def bind(state: ClusterState, pod: dict, gpus: int = 0) -> dict:
    """Create the pod already bound (as the scheduler leaves it), holding ``gpus`` GPUs of its node."""
    meta = pod["metadata"]
    if gpus:
        state.inventory.allocate(pod["spec"]["nodeName"], (meta["namespace"], meta["name"]), "base", gpus)
    return state.store.create("pods", pod)


def as_v1pod(pod: dict):
    """Deserialize like the Kubernetes Python client does (it refuses missing required fields)."""
    import json

    from kubernetes.client import ApiClient

    class _Resp:
        data = json.dumps(pod)

    return ApiClient().deserialize(_Resp(), "V1Pod")


def get(state: ClusterState, name: str) -> dict | None:
    return state.store.get("pods", NS, name)


def phase(state: ClusterState, name: str) -> str | None:
    p = get(state, name)
    return None if p is None else p.get("status", {}).get("phase")


def cstate(state: ClusterState, name: str) -> dict:
    return get(state, name)["status"]["containerStatuses"][0]


def events(state: ClusterState, name: str, namespace: str = NS) -> list[tuple[str, str, str]]:
    """(type, reason, message) of the events about ``name``, oldest first."""
    evs = sorted(state.store.list("events", namespace), key=lambda e: int(e["metadata"]["resourceVersion"]))
    return [(e["type"], e["reason"], e["message"]) for e in evs if e["involvedObject"]["name"] == name]


def log_lines(state: ClusterState, name: str, container: str = "base") -> list[str]:
    lg = state.logs.get(NS, name, container)
    return [] if lg is None else [t for _, t in lg.lines]


async def drive(kubelet: Kubelet, until: Callable[[], bool], timeout: float = 120.0, what: str = "") -> None:
    """Run kubelet passes (and the registered controllers': taint eviction, node lifecycle) until ``until()``
    holds. The timeout is a stall guard: what is awaited (a process starting, a toleration running out) takes
    seconds, more on a loaded machine, and the wait ends as soon as it holds."""
    deadline = time.monotonic() + timeout
    while True:
        await kubelet.reconcile()
        for addon in kubelet.state.addons.values():
            done = addon.run_pass()
            if asyncio.iscoroutine(done):  # kube-proxy's pass is async: it binds and forwards sockets
                await done
        if until():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or until}")
        await asyncio.sleep(0.05)


async def with_kubelet(state: ClusterState, body: Callable) -> None:
    """Run ``await body(kubelet)`` with a fresh kubelet that is always shut down (no process survives)."""
    kubelet = Kubelet(state)
    try:
        await body(kubelet)
    finally:
        await kubelet.shutdown()
