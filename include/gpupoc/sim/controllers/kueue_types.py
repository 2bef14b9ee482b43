"""What the Kueue modules share: labels, gates, names, Workload conditions and messages, the queue
manager's view of a Workload (``Entry``)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from gpupoc.kube.resources import GPU
from gpupoc.sim import clock
from gpupoc.sim.controllers.scheduling import gpu_request

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
MANAGED_LABEL = "kueue.x-k8s.io/managed"
ADMISSION_GATE = "kueue.x-k8s.io/admission"
# Topology-aware scheduling is on by default since Kueue v0.14: the pod webhook adds this gate after the
# admission gate, and an admission without a topology removes both (jobs/pod pod_webhook.go, prepare()).
TOPOLOGY_GATE = "kueue.x-k8s.io/topology"
KUEUE_GATES = (ADMISSION_GATE, TOPOLOGY_GATE)
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
POD_SET = "main"
COMPONENT = "kueue-admission"
Key = tuple[str, str]


def workload_name(pod_name: str, pod_uid: str) -> str:
    """Kueue's name for a pod's Workload: ``pod-<pod name>`` cut to 247 characters, ``-``, then 5 hex of the
    SHA-1 of the owner's kind, group, name and UID, one a line (jobframework ``GetWorkloadNameForOwnerWithGVK``;
    real Kueue v0.17.0 named the pod ``train-2`` of UID ``U`` ``pod-train-2-`` + sha1("Pod\n\ntrain-2\nU")[:5])."""
    digest = hashlib.sha1(f"Pod\n\n{pod_name}\n{pod_uid}".encode()).hexdigest()[:5]
    return f"pod-{pod_name}"[:247] + f"-{digest}"


def set_condition(obj: dict, type_: str, status: str, reason: str, message: str) -> bool:
    """metav1.Condition semantics on a Workload; returns whether it changed."""
    conds = obj.setdefault("status", {}).setdefault("conditions", [])
    current = next((c for c in conds if c["type"] == type_), None)
    if current and (current["status"], current["reason"], current["message"]) == (status, reason, message):
        return False
    new = {"type": type_, "status": status, "reason": reason, "message": message,
           "lastTransitionTime": clock.rfc3339(), "observedGeneration": 1}
    if current is not None:
        if current["status"] == status:
            new["lastTransitionTime"] = current["lastTransitionTime"]
        conds[conds.index(current)] = new
    else:
        conds.append(new)
    return True


def pending_message(flavor: str, need: int, available: int, maximum: int, pod_set: str = POD_SET) -> str:
    """Kueue's flavor-assignment failure for one pod set (``fitsResourceQuota``)."""
    if need > maximum:  # v0.17.0: the pod sets of the Workload considered before this one asked nothing here
        return (f"couldn't assign flavors to pod set {pod_set}: insufficient quota for {GPU} in flavor {flavor}, "
                f"previously considered podsets requests (0) + current podset request ({need}) > maximum capacity "
                f"({maximum})")
    return (f"couldn't assign flavors to pod set {pod_set}: insufficient unused quota for {GPU} in flavor "
            f"{flavor}, {need - available} more needed")


@dataclass
class Entry:
    """One Workload as the queue manager sees it; ``pods`` are its owners (one, or a pod group's)."""

    key: Key  # (namespace, workload name)
    pods: list[Key]
    local_queue: str
    gpus: int
    priority: int
    created: str
    seq: int
    admitted: bool = False
    finished: bool = False
    pod_set: str = POD_SET
    admitted_at: float = 0.0

    @property
    def pod(self) -> Key:
        return self.pods[0] if self.pods else (self.key[0], "")

    @pod.setter
    def pod(self, key: Key) -> None:
        self.pods = [key] + self.pods[1:]


def podset_gpus(podset: dict) -> int:
    return gpu_request({"spec": podset.get("template", {}).get("spec", {})}) * int(podset.get("count", 1))


def template_spec(spec: dict) -> dict:
    drop = ("nodeName", "schedulingGates")
    return {k: v for k, v in spec.items() if k not in drop}
