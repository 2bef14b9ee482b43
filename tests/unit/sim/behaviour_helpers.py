"""Helpers for the behaviour-profile tests: an in-process cluster with room to spare in the quotas, pods
submitted through the real admission chain, gates lifted at once, and a fake clock for staggered releases."""

from __future__ import annotations

import json

import yaml

from gpupoc.sim.admission import admit_pod, after_pod_created
from gpupoc.sim.behaviours import Behaviour
from gpupoc.sim.bootstrap import bootstrap
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import DEFAULT_CONFIG, ClusterConfig

NS = "team-vision"
GATE = "gpupoc.io/release"
TOLERATE_GPU = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
KPO_LABELS = {"dag_id": "poc_queue_congestion", "task_id": "wave", "run_id": "manual__1", "kubernetes_pod_operator":
              "True", "try_number": "1", "map_index": "0", "gpupoc.io/run-id": "r1"}


class FakeClock:
    def __init__(self, t: float = 1000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def make_state(tmp_path, behaviours=(), seed: int = 0, faults=(), quota_gpus: int = 64,
               training_cq_gpus: int | None = None) -> ClusterState:
    """The default cluster (3 x 8 training GPUs, Kueue queues) with quotas large enough never to refuse."""
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    for t in raw["tenants"]:
        t["quota"]["gpus"] = quota_gpus
    for cq in raw["kueue"]["cluster_queues"]:
        if cq["name"] == "training-cq" and training_cq_gpus is not None:
            cq["nominal_gpus"] = training_cq_gpus
    state = ClusterState(ClusterConfig.model_validate(raw), tmp_path, faults=frozenset(faults),
                         behaviours=frozenset(Behaviour(b) for b in behaviours), behaviour_seed=seed)
    bootstrap(state)
    return state


def submit(state, name: str, gpus: int = 8, pc: str = "gpupoc-low", gated: bool = True, queue: str | None = None,
           ns: str = NS) -> dict:
    """Create a pod as the API server does (admission, store, after-create hook), with the KPO's labels."""
    labels = {**KPO_LABELS, "gpupoc.io/item": name}
    if queue:
        labels["kueue.x-k8s.io/queue-name"] = queue
    body = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": labels, "annotations": {"gpupoc.io/workload": name}},
            "spec": {"priorityClassName": pc, "tolerations": TOLERATE_GPU, "nodeSelector": {"gpupoc.io/pool": "training"},
                     "terminationGracePeriodSeconds": 30,
                     "containers": [{"name": "base", "image": "gpupoc/virtual:1",
                                     "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}
    if gated:
        body["spec"]["schedulingGates"] = [{"name": GATE}]
    pod = admit_pod(state, body, ns)
    state.store.create("pods", pod)
    after_pod_created(state, pod)
    return pod


def lift_gates(state, names, ns: str = NS) -> None:
    """Remove the pipeline's gate from each pod, in ``names`` order (as one wave release)."""
    for name in names:
        pod = state.store.get("pods", ns, name)
        gates = [g for g in pod["spec"].get("schedulingGates") or [] if g["name"] != GATE]
        if gates:
            pod["spec"]["schedulingGates"] = gates
        else:
            pod["spec"].pop("schedulingGates", None)
        state.store.update("pods", pod)


def pod(state, name, ns=NS):
    return state.store.get("pods", ns, name)


def condition(obj, type_):
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == type_), None)


def events(state, name, reason=None):
    return [e for e in state.store.list("events") if e["involvedObject"]["name"] == name
            and (reason is None or e["reason"] == reason)]


def audit_events(state) -> list[dict]:
    path = state.audit_log_path
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def audited(state, verb: str, name: str, subresource: str = "") -> list[dict]:
    return [e for e in audit_events(state) if e["verb"] == verb and e["objectRef"].get("name") == name
            and e["objectRef"].get("subresource", "") == subresource]


def bound(state, names, ns=NS) -> list[str]:
    return [n for n in names if (pod(state, n, ns) or {}).get("spec", {}).get("nodeName")]


def preemption(state) -> tuple[str, str]:
    """Fill the training pool with three low-priority pods, then submit a high-priority one that must preempt;
    returns (victim, preemptor) names."""
    lows = ["low-a", "low-b", "low-c"]
    for name in lows:
        submit(state, name, gpus=8, pc="gpupoc-low", gated=False)
    state.scheduler.run_pass()
    assert bound(state, lows) == lows
    submit(state, "high-d", gpus=8, pc="gpupoc-high", gated=False)
    state.scheduler.run_pass()
    victims = [n for n in lows if pod(state, n)["metadata"].get("deletionTimestamp")]
    assert len(victims) == 1, f"expected one victim, got {victims}"
    return victims[0], "high-d"
