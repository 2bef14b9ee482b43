"""Helpers for the serving-object tests: Deployments and Services created as the API server stores them, and
pods made Running and Ready by hand (no kubelet), so each controller pass can be looked at."""

from __future__ import annotations

from gpupoc.sim.api import defaults
from gpupoc.sim.controllers.deployments import DeploymentController
from gpupoc.sim.controllers.endpointslices import EndpointSliceController
from gpupoc.sim.controllers.replicasets import ReplicaSetController, is_active, owned_pods

from .behaviour_helpers import TOLERATE_GPU, make_state  # noqa: F401 - re-exported for the tests

NS = "team-serving"


def deployment_body(name: str = "web", replicas: int = 2, image: str = "gpupoc/workload:1.0",
                    strategy: dict | None = None) -> dict:
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"tolerations": TOLERATE_GPU,
                                  "containers": [{"name": "server", "image": image,
                                                  "ports": [{"name": "http", "containerPort": 8080}]}]}}}
    if strategy is not None:
        spec["strategy"] = strategy
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": spec}


def create(state, resource: str, body: dict) -> dict:
    defaults.on_create(state, resource, body)
    return state.store.create(resource, body)


class Controllers:
    """The three controllers of one state, run in the loop's order."""

    def __init__(self, state):
        self.state = state
        self.deployments = DeploymentController(state)
        self.replicasets = ReplicaSetController(state)
        self.slices = EndpointSliceController(state)

    def turn(self, times: int = 1) -> None:
        for _ in range(times):
            self.deployments.run_pass()
            self.replicasets.run_pass()
            self.deployments.run_pass()
            self.slices.run_pass()


def make_ready(state, pods: list[dict], ready: bool = True) -> None:
    """Bind and run ``pods`` (Ready as given), each with its own pod IP."""
    for i, pod in enumerate(pods):
        pod["spec"]["nodeName"] = "inference-node-1"
        status = pod.setdefault("status", {})
        status["phase"] = "Running"
        status.setdefault("podIP", f"10.244.9.{len(state.store.list('pods')) + i + 2}")
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
        state.store.update("pods", pod)


def live_pods(state, rs: dict) -> list[dict]:
    return [p for p in owned_pods(state, rs) if is_active(p)]


def finish_deleted(state) -> None:
    """The kubelet's part of a graceful delete: pods with a deletionTimestamp leave the store."""
    for pod in list(state.store.list("pods")):
        if pod["metadata"].get("deletionTimestamp"):
            state.store.delete("pods", pod["metadata"]["namespace"], pod["metadata"]["name"])
