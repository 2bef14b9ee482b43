"""The ReplicaSet controller and the garbage collector of what Deployments and ReplicaSets own.

As kube-controller-manager's (kubernetes ``pkg/controller/replicaset/replica_set.go`` ``manageReplicas``,
``syncReplicaSet``; ``replica_set_utils.go`` ``calculateStatus``): a ReplicaSet's active pods are the pods it
controls (ownerReference ``controller: true`` with its uid) that have not ended and are not being deleted.
Fewer than ``spec.replicas``: it creates pods from the template (named ``<rs>-<5 chars>``, the template's
labels, an ownerReference to the ReplicaSet) through the API server's admission (quota, priority, the
schedulers' webhooks); a refused create is an event ``FailedCreate`` "Error creating: <message>" and the
condition ``ReplicaFailure`` (reason ``FailedCreate``), tried again after a back-off. More: it deletes the
surplus, unscheduled before scheduled, pending before running, not ready before ready, newest first
(``controller.ActivePodsWithRanks``). Events ``SuccessfulCreate`` "Created pod: <name>" and
``SuccessfulDelete`` "Deleted pod: <name>". Status: ``replicas``, ``fullyLabeledReplicas``, ``readyReplicas``,
``availableReplicas`` (ready, ``minReadySeconds`` 0), ``observedGeneration``.

The garbage collector (``pkg/controller/garbagecollector``, background propagation) deletes ReplicaSets whose
owning Deployment is gone and pods whose owning ReplicaSet is gone. Every write is audited under the
controller's service account (``replicaset-controller``, ``generic-garbage-collector``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from gpupoc.sim.admission import admit_pod, after_pod_created
from gpupoc.sim.api.pods import graceful_delete
from gpupoc.sim.api.service_defaults import selector_matches
from gpupoc.sim.api.status import StatusError
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import actors
from gpupoc.sim.controllers.kubelet_status import set_condition
from gpupoc.sim.events import NORMAL, WARNING
from gpupoc.sim.pod_state import TERMINAL, is_active, is_ready
from gpupoc.sim.store import Conflict, json_copy

log = logging.getLogger(__name__)

REPLICASET_CONTROLLER = actors.service_account("kube-system", "replicaset-controller", "kube-controller-manager",
                                               "system:controller:replicaset-controller")
GARBAGE_COLLECTOR = actors.service_account("kube-system", "generic-garbage-collector", "kube-controller-manager",
                                           "system:controller:generic-garbage-collector")
BURST_REPLICAS = 500  # replica_set.go BurstReplicas
RETRY_SECONDS = 1.0
APPS = "/apis/apps/v1"
Key = tuple[str, str]


def controller_uid(obj: dict) -> str | None:
    """The uid of the object's controlling owner, if any."""
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return ref.get("uid")
    return None


def owner_ref(owner: dict) -> dict:
    """An ownerReference to ``owner`` as a controller sets it."""
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def owned_pods(state: ClusterState, rs: dict) -> list[dict]:
    uid = rs["metadata"]["uid"]
    return [p for p in state.store.list("pods", rs["metadata"]["namespace"]) if controller_uid(p) == uid]


def _deletion_rank(pod: dict) -> tuple:
    """Which surplus pod goes first: unscheduled, pending, not ready, then the newest."""
    status = pod.get("status") or {}
    return (bool((pod.get("spec") or {}).get("nodeName")), status.get("phase") == "Running", is_ready(pod),
            _negated(pod["metadata"].get("creationTimestamp", "")))


def _negated(ts: str) -> tuple:
    return tuple(-ord(ch) for ch in ts)


@dataclass
class ReplicaSetController:
    """Keeps every ReplicaSet's pods at ``spec.replicas``; collects what lost its owner."""

    state: ClusterState
    retry_at: dict[Key, float] = field(default_factory=dict)  # rs -> when a refused create is tried again
    known_sets: set[str] = field(default_factory=set)  # ReplicaSet uids of the last pass

    def run_pass(self) -> int:
        """One sync of every ReplicaSet, then garbage collection; returns how many pods were created or deleted."""
        changed = 0
        for rs in list(self.state.store.list("replicasets")):
            changed += self.sync(rs)
        self.collect_garbage()
        return changed

    def sync(self, rs: dict) -> int:
        pods = owned_pods(self.state, rs)
        active = [p for p in pods if is_active(p)]
        want = int((rs.get("spec") or {}).get("replicas", 1))
        diff, changed = len(active) - want, 0
        key = (rs["metadata"]["namespace"], rs["metadata"]["name"])
        failure = None
        if diff < 0 and time.monotonic() >= self.retry_at.get(key, 0.0):
            for _ in range(min(-diff, BURST_REPLICAS)):
                failure = self._create(rs)
                if failure is not None:
                    self.retry_at[key] = time.monotonic() + RETRY_SECONDS
                    break
                changed += 1
        elif diff > 0:
            for pod in sorted(active, key=_deletion_rank)[:diff]:
                self._delete(rs, pod)
                changed += 1
        self._status(rs, failure)
        return changed

    def _create(self, rs: dict) -> str | None:
        """Create one pod of ``rs``; the refusal's message when admission refuses it."""
        state, ns = self.state, rs["metadata"]["namespace"]
        body = pod_from_template(rs)
        request = json_copy(body)
        try:
            pod = admit_pod(state, body, ns)
            state.store.create("pods", pod)
        except (StatusError, Conflict) as exc:
            message = str(exc)
            self._event(rs, "FailedCreate", f"Error creating: {message}", WARNING)
            return message
        after_pod_created(state, pod)
        actors.audit_write(state, REPLICASET_CONTROLLER, "create", pod, request_object=request, code=201)
        self._event(rs, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}", NORMAL)
        state.kick()
        return None

    def _delete(self, rs: dict, pod: dict) -> None:
        graceful_delete(self.state, pod)
        actors.audit_write(self.state, REPLICASET_CONTROLLER, "delete", pod, request_object=actors.DELETE_OPTIONS)
        self._event(rs, "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}", NORMAL)

    def _status(self, rs: dict, failure: str | None) -> None:
        pods = [p for p in owned_pods(self.state, rs) if is_active(p)]
        labels_ok = [p for p in pods if selector_matches((rs.get("spec") or {}).get("selector"),
                                                         p["metadata"].get("labels"))]
        ready = sum(1 for p in pods if is_ready(p))
        status = json_copy(rs.get("status") or {})
        status.update({"replicas": len(pods), "fullyLabeledReplicas": len(labels_ok), "readyReplicas": ready,
                       "availableReplicas": ready,
                       "observedGeneration": rs["metadata"].get("generation", 1)})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "ReplicaFailure"]
        if failure is not None:
            holder = {"conditions": []}
            set_condition(holder, "ReplicaFailure", "True", "FailedCreate", failure)
            conditions += holder["conditions"]
        status["conditions"] = conditions
        if not conditions:
            status.pop("conditions")
        if status != rs.get("status"):
            rs["status"] = status
            self.state.store.update("replicasets", rs)

    def _event(self, rs: dict, reason: str, message: str, type_: str) -> None:
        self.state.events.record(rs, reason, message, type_, component="replicaset-controller")

    def collect_garbage(self) -> None:
        """Background propagation: ReplicaSets of a gone Deployment, pods of a gone ReplicaSet."""
        store = self.state.store
        deployments = {d["metadata"]["uid"] for d in store.list("deployments")}
        for rs in list(store.list("replicasets")):
            uid = controller_uid(rs)
            if uid is not None and uid not in deployments:
                store.delete("replicasets", rs["metadata"]["namespace"], rs["metadata"]["name"])
                actors.audit_write(self.state, GARBAGE_COLLECTOR, "delete", rs, resource="replicasets", api_path=APPS)
        sets = {rs["metadata"]["uid"] for rs in store.list("replicasets")}
        gone, self.known_sets = self.known_sets - sets, sets
        if not gone:
            return  # pods are orphaned only when a ReplicaSet goes: no scan of every pod each pass
        for pod in list(store.list("pods")):
            ref = next((r for r in pod["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
            if ref is None or ref.get("kind") != "ReplicaSet" or ref.get("uid") in sets:
                continue
            if not pod["metadata"].get("deletionTimestamp"):
                graceful_delete(self.state, pod)
                actors.audit_write(self.state, GARBAGE_COLLECTOR, "delete", pod,
                                   request_object=actors.DELETE_OPTIONS)


def pod_from_template(rs: dict) -> dict:
    """The pod the ReplicaSet controller posts: the template's labels, annotations and spec, a generated name
    and an ownerReference to the ReplicaSet (``controller.GetPodFromTemplate``)."""
    template = json_copy((rs.get("spec") or {}).get("template") or {})
    meta = template.get("metadata") or {}
    prefix = rs["metadata"]["name"][:58]
    out_meta = {"generateName": f"{prefix}-", "namespace": rs["metadata"]["namespace"],
                "labels": meta.get("labels") or {}, "ownerReferences": [owner_ref(rs)]}
    if meta.get("annotations"):
        out_meta["annotations"] = meta["annotations"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": out_meta, "spec": template.get("spec") or {}}
