"""Helpers for the scheduler-mode tests: an in-process cluster from a shipped mode config, pods submitted
through the real admission chain the way each scheduler takes them, and controller passes driven by hand."""

from __future__ import annotations

from typing import Callable

import yaml

from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.sim.admission import admit_pod, after_pod_created
from gpupoc.sim.bootstrap import bootstrap
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import ClusterConfig, shipped_config
from gpupoc.sim.controllers.loop import gang_scheduler
from gpupoc.sim.faults import Fault

TOLERATE_GPU = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
VISION, NLP, SERVING = "team-vision", "team-nlp", "team-serving"
LOCAL_QUEUE = {VISION: "training", NLP: "training", SERVING: "inference"}


def mode_state(tmp_path, mode: str, faults=(), edit: Callable[[dict], None] | None = None) -> ClusterState:
    """The shipped cluster of ``mode`` with tenant quotas too large to refuse anything."""
    raw = yaml.safe_load(shipped_config(SchedulerMode(mode)).read_text())
    for t in raw["tenants"]:
        t["quota"] = {"gpus": 256, "pods": 256}
    if edit is not None:
        edit(raw)
    state = ClusterState(ClusterConfig.model_validate(raw), tmp_path, faults=frozenset(Fault(f) for f in faults))
    bootstrap(state)
    return state


def submit(state: ClusterState, name: str, ns: str = VISION, gpus: int = 8, *, group: str | None = None,
           total: int | None = None, queue: str | None = None, pc: str = "gpupoc-normal",
           preemptible: bool | None = None, pool: str = "training") -> dict:
    """A pod the way the cluster's scheduler takes it (see the mode's docstring), created as the API does."""
    mode = state.mode
    meta: dict = {"name": name, "labels": {}, "annotations": {}}
    spec: dict = {"priorityClassName": pc, "tolerations": TOLERATE_GPU, "nodeSelector": {"gpupoc.io/pool": pool},
                  "terminationGracePeriodSeconds": 30,
                  "containers": [{"name": "main", "image": "gpupoc/virtual:1",
                                  "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}
    if mode in (SchedulerMode.KUBE, SchedulerMode.KUEUE):
        meta["labels"]["kueue.x-k8s.io/queue-name"] = queue or LOCAL_QUEUE[ns]
        if group:
            meta["labels"]["kueue.x-k8s.io/pod-group-name"] = group
            meta["annotations"]["kueue.x-k8s.io/pod-group-total-count"] = str(total)
    elif mode == SchedulerMode.VOLCANO:
        spec["schedulerName"] = "volcano"
        if group:
            meta["annotations"]["scheduling.k8s.io/group-name"] = group
        meta["annotations"]["scheduling.volcano.sh/queue-name"] = queue or ns
    elif mode == SchedulerMode.KAI:
        spec["schedulerName"] = "kai-scheduler"
        meta["labels"]["kai.scheduler/queue"] = queue or ns
        if group:
            meta["annotations"]["pod-group-name"] = group
        if preemptible is not None:
            meta["labels"]["kai.scheduler/preemptibility"] = "preemptible" if preemptible else "non-preemptible"
    pod = admit_pod(state, {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}, ns)
    state.store.create("pods", pod)
    after_pod_created(state, pod)
    return pod


def podgroup(state: ClusterState, name: str, ns: str, min_member: int, queue: str | None = None, **spec) -> dict:
    return state.store.create("podgroups", {"metadata": {"name": name, "namespace": ns},
                                            "spec": {"minMember": min_member, "queue": queue or ns, **spec}})


def run(state: ClusterState, passes: int = 1) -> None:
    """Controller passes as the loop runs them (Kueue, the gang scheduler's session, kube-scheduler)."""
    gang = gang_scheduler(state)
    for _ in range(passes):
        state.kueue.run_pass()
        if gang is not None:
            gang._seen = None  # a session now, whatever the interval
            gang.run_pass()
        state.scheduler.run_pass()


def remove(state: ClusterState, name: str, ns: str = VISION) -> None:
    """A pod gone (its termination done): GPUs back to the inventory, the object deleted."""
    state.inventory.release((ns, name))
    state.store.delete("pods", ns, name)


def bound(state: ClusterState, ns: str | None = None, prefix: str = "") -> list[str]:
    return sorted(p["metadata"]["name"] for p in state.store.list("pods", ns)
                  if p["spec"].get("nodeName") and p["metadata"]["name"].startswith(prefix)
                  and not p["metadata"].get("deletionTimestamp"))


def ungated(state: ClusterState, ns: str, prefix: str = "") -> list[str]:
    return sorted(p["metadata"]["name"] for p in state.store.list("pods", ns)
                  if p["metadata"]["name"].startswith(prefix) and not p["spec"].get("schedulingGates"))


def evicted(state: ClusterState, ns: str | None = None) -> list[str]:
    return sorted(p["metadata"]["name"] for p in state.store.list("pods", ns) if p["metadata"].get("deletionTimestamp"))


def condition(obj: dict, type_: str) -> dict | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == type_), None)


def events(state: ClusterState, kind: str, name: str, reason: str | None = None) -> list[dict]:
    return [e for e in state.store.list("events") if e["involvedObject"]["kind"] == kind
            and e["involvedObject"]["name"] == name and (reason is None or e["reason"] == reason)]


def workload(state: ClusterState, ns: str, pod_name: str) -> dict:
    return next(w for w in state.store.list("workloads", ns)
                if any(o["name"] == pod_name for o in w["metadata"]["ownerReferences"]))
