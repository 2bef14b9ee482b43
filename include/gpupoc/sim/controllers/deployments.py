"""The Deployment controller: one ReplicaSet per pod template, scaled by the rollout strategy.

As kube-controller-manager's (kubernetes ``pkg/controller/deployment``):

- the new ReplicaSet is the one whose template equals the Deployment's; it is named
  ``<deployment>-<pod-template-hash>`` and labelled ``pod-template-hash`` (``sync.go`` ``getNewReplicaSet``,
  ``util/deployment_util.go``; the hash is FNV-32a of the template, encoded as ``rand.SafeEncodeString``);
  annotations ``deployment.kubernetes.io/revision``, ``desired-replicas`` and ``max-replicas``;
- RollingUpdate (``rolling.go`` ``reconcileNewReplicaSet``, ``reconcileOldReplicaSets``): the new ReplicaSet
  grows while all replicas stay within ``replicas + maxSurge`` (rounded up); old ones shrink, their unhealthy
  pods first, while available pods stay at ``replicas - maxUnavailable`` (rounded down; 1 when both are 0);
  Recreate (``recreate.go``): old ReplicaSets to zero, then the new one up;
- status (``sync.go`` ``calculateStatus``): ``replicas``, ``updatedReplicas``, ``readyReplicas``,
  ``availableReplicas``, ``unavailableReplicas``, ``observedGeneration``; conditions ``Available``
  (``MinimumReplicasAvailable`` "Deployment has minimum availability." / ``MinimumReplicasUnavailable``
  "Deployment does not have minimum availability.") and ``Progressing`` (``NewReplicaSetCreated`` "Created new
  replica set \"x\"", ``FoundNewReplicaSet``, ``ReplicaSetUpdated`` "ReplicaSet \"x\" is progressing.",
  ``NewReplicaSetAvailable`` "ReplicaSet \"x\" has successfully progressed.", ``ProgressDeadlineExceeded``
  "ReplicaSet \"x\" has timed out progressing." after ``progressDeadlineSeconds``; ``progress.go``);
- events ``ScalingReplicaSet`` "Scaled up replica set x from 0 to 2" / "Scaled down ..." (``sync.go``
  ``scaleReplicaSet``), written under the ``deployment-controller`` service account.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field

from gpupoc.sim import clock
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import actors
from gpupoc.sim.controllers.replicasets import APPS, TERMINAL, controller_uid, owned_pods, owner_ref
from gpupoc.sim.events import NORMAL
from gpupoc.sim.store import Conflict, json_copy

DEPLOYMENT_CONTROLLER = actors.service_account("kube-system", "deployment-controller", "kube-controller-manager",
                                               "system:controller:deployment-controller")
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand SafeEncodeString


def template_hash(template: dict) -> str:
    """FNV-32a of the template, in the API's safe alphabet (``controller.ComputeHash``)."""
    h = 0x811C9DC5
    for byte in json.dumps(template, sort_keys=True, separators=(",", ":")).encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_ALPHANUMS[ord(ch) % len(_ALPHANUMS)] for ch in str(h))


def resolve(value: object, total: int, round_up: bool) -> int:
    """An int-or-percent of ``total`` (``intstr.GetScaledValueFromIntOrPercent``)."""
    if isinstance(value, str) and value.endswith("%"):
        scaled = int(value[:-1]) * total / 100
        return math.ceil(scaled) if round_up else math.floor(scaled)
    return int(value or 0)


def surge_and_unavailable(dep: dict) -> tuple[int, int]:
    """``maxSurge`` and ``maxUnavailable`` resolved (``util.ResolveFenceposts``)."""
    spec = dep["spec"]
    replicas = int(spec.get("replicas", 1))
    rolling = (spec.get("strategy") or {}).get("rollingUpdate") or {}
    surge = resolve(rolling.get("maxSurge", "25%"), replicas, True)
    unavailable = resolve(rolling.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _replicas(rs: dict) -> int:
    return int((rs.get("spec") or {}).get("replicas", 0))


def _available(rs: dict) -> int:
    return int((rs.get("status") or {}).get("availableReplicas") or 0)


@dataclass
class DeploymentController:
    """Reconciles every Deployment's ReplicaSets and status."""

    state: ClusterState
    progress_since: dict[str, float] = field(default_factory=dict)  # deployment uid -> last progress (monotonic)

    def run_pass(self) -> int:
        return sum(self.sync(dep) for dep in list(self.state.store.list("deployments")))

    def owned_sets(self, dep: dict) -> list[dict]:
        uid = dep["metadata"]["uid"]
        return [rs for rs in self.state.store.list("replicasets", dep["metadata"]["namespace"])
                if controller_uid(rs) == uid]

    def sync(self, dep: dict) -> int:
        sets = self.owned_sets(dep)
        template = dep["spec"].get("template") or {}
        digest = template_hash(template)
        new = next((rs for rs in sets if (rs["metadata"].get("labels") or {}).get(HASH_LABEL) == digest), None)
        created = new is None
        if new is None:
            new = self._create_set(dep, digest, sets)
            if new is None:
                return 0
        old = [rs for rs in sets if rs is not new]
        if (dep["spec"].get("strategy") or {}).get("type") == "Recreate":
            changed = self._recreate(dep, new, old)
        else:
            changed = self._rolling(dep, new, old)
        self._status(dep, new, old, created)
        return changed

    def _create_set(self, dep: dict, digest: str, sets: list[dict]) -> dict | None:
        template = json_copy(dep["spec"].get("template") or {})
        labels = {**((template.get("metadata") or {}).get("labels") or {}), HASH_LABEL: digest}
        template.setdefault("metadata", {})["labels"] = labels
        selector = json_copy(dep["spec"]["selector"])
        selector.setdefault("matchLabels", {})[HASH_LABEL] = digest
        revision = 1 + max([int((rs["metadata"].get("annotations") or {}).get(REVISION, 0)) for rs in sets] or [0])
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": {"name": f"{dep['metadata']['name']}-{digest}", "namespace": dep["metadata"]["namespace"],
                           "labels": labels, "ownerReferences": [owner_ref(dep)], "generation": 1,
                           "annotations": {REVISION: str(revision), DESIRED: str(dep["spec"].get("replicas", 1)),
                                           MAX_REPLICAS: str(dep["spec"].get("replicas", 1) +
                                                             surge_and_unavailable(dep)[0])}},
              "spec": {"replicas": 0, "minReadySeconds": dep["spec"].get("minReadySeconds", 0),
                       "selector": selector, "template": template},
              "status": {"replicas": 0}}
        try:
            rs = self.state.store.create("replicasets", rs)
        except Conflict:
            return None
        actors.audit_write(self.state, DEPLOYMENT_CONTROLLER, "create", rs, resource="replicasets", api_path=APPS,
                           code=201)
        annotations = dep["metadata"].setdefault("annotations", {})
        annotations[REVISION] = str(revision)
        self.state.store.update("deployments", dep)
        return rs

    def _scale(self, dep: dict, rs: dict, replicas: int) -> int:
        current = _replicas(rs)
        if replicas == current:
            return 0
        rs["spec"]["replicas"] = replicas
        rs["metadata"]["generation"] = int(rs["metadata"].get("generation", 1)) + 1
        annotations = rs["metadata"].setdefault("annotations", {})
        annotations[DESIRED] = str(dep["spec"].get("replicas", 1))
        annotations[MAX_REPLICAS] = str(dep["spec"].get("replicas", 1) + surge_and_unavailable(dep)[0])
        self.state.store.update("replicasets", rs)
        actors.audit_write(self.state, DEPLOYMENT_CONTROLLER, "update", rs, resource="replicasets", api_path=APPS)
        direction = "up" if replicas > current else "down"
        self.state.events.record(dep, "ScalingReplicaSet", f"Scaled {direction} replica set "
                                 f"{rs['metadata']['name']} from {current} to {replicas}", NORMAL,
                                 component="deployment-controller")
        self.progress_since[dep["metadata"]["uid"]] = time.monotonic()
        self.state.kick()
        return 1

    def _rolling(self, dep: dict, new: dict, old: list[dict]) -> int:
        want = int(dep["spec"].get("replicas", 1))
        surge, unavailable = surge_and_unavailable(dep)
        changed = 0
        total = sum(_replicas(rs) for rs in [new, *old])
        if _replicas(new) > want:
            changed += self._scale(dep, new, want)
        elif _replicas(new) < want and total < want + surge:
            changed += self._scale(dep, new, min(want + surge - total, want - _replicas(new)) + _replicas(new))
        old_total = sum(_replicas(rs) for rs in old)
        if not old_total:
            return changed
        all_total = sum(_replicas(rs) for rs in [new, *old])
        min_available = want - unavailable
        new_unavailable = _replicas(new) - _available(new)
        budget = all_total - min_available - new_unavailable
        for rs in sorted(old, key=lambda r: r["metadata"].get("creationTimestamp", "")):
            if budget <= 0:
                break
            unhealthy = _replicas(rs) - _available(rs)
            healthy_room = max(sum(_available(r) for r in [new, *old]) - min_available, 0)
            down = min(_replicas(rs), budget, max(unhealthy, 0) + healthy_room)
            if down > 0:
                changed += self._scale(dep, rs, _replicas(rs) - down)
                budget -= down
        return changed

    def _recreate(self, dep: dict, new: dict, old: list[dict]) -> int:
        changed = sum(self._scale(dep, rs, 0) for rs in old if _replicas(rs))
        running = [p for rs in old for p in owned_pods(self.state, rs)
                   if (p.get("status") or {}).get("phase") not in TERMINAL]  # recreate.go oldPodsRunning
        if not running:
            changed += self._scale(dep, new, int(dep["spec"].get("replicas", 1)))
        return changed

    def _status(self, dep: dict, new: dict, old: list[dict], created: bool) -> None:
        sets = [new, *old]
        want = int(dep["spec"].get("replicas", 1))
        _, unavailable = surge_and_unavailable(dep)

        def total(key: str, of: list[dict] = sets) -> int:
            return sum(int((rs.get("status") or {}).get(key) or 0) for rs in of)

        status = json_copy(dep.get("status") or {})
        status.update({"observedGeneration": dep["metadata"].get("generation", 1), "replicas": total("replicas"),
                       "updatedReplicas": total("replicas", [new]), "readyReplicas": total("readyReplicas"),
                       "availableReplicas": total("availableReplicas"),
                       "unavailableReplicas": max(want - total("availableReplicas"), 0)})
        for key in ("readyReplicas", "availableReplicas", "unavailableReplicas", "updatedReplicas"):
            if not status[key]:
                status.pop(key)
        before = dep.get("status") or {}
        if any(status.get(k) != before.get(k) for k in ("replicas", "updatedReplicas", "availableReplicas")):
            self.progress_since[dep["metadata"]["uid"]] = time.monotonic()
        conditions = {c["type"]: c for c in status.get("conditions") or []}
        available = total("availableReplicas") >= want - unavailable
        _condition(conditions, "Available", available,
                   "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
                   "Deployment has minimum availability." if available else
                   "Deployment does not have minimum availability.")
        _condition(conditions, "Progressing", *self._progress(dep, new, old, created, conditions))
        status["conditions"] = [conditions[t] for t in ("Available", "Progressing") if t in conditions]
        if status != dep.get("status"):
            dep["status"] = status
            self.state.store.update("deployments", dep)

    def _progress(self, dep: dict, new: dict, old: list[dict], created: bool, conditions: dict) -> tuple:
        name = new["metadata"]["name"]
        want = int(dep["spec"].get("replicas", 1))
        uid = dep["metadata"]["uid"]
        done = (_replicas(new) == want and _available(new) >= want and int((new.get("status") or {})
                .get("replicas") or 0) == want and not any(int((rs.get("status") or {}).get("replicas") or 0)
                                                           for rs in old))
        if done:
            return True, "NewReplicaSetAvailable", f'ReplicaSet "{name}" has successfully progressed.'
        if created:
            self.progress_since[uid] = time.monotonic()
            return True, "NewReplicaSetCreated", f'Created new replica set "{name}"'
        since = self.progress_since.setdefault(uid, time.monotonic())
        deadline = dep["spec"].get("progressDeadlineSeconds", 600)
        if time.monotonic() - since > float(deadline):
            return False, "ProgressDeadlineExceeded", f'ReplicaSet "{name}" has timed out progressing.'
        current = conditions.get("Progressing") or {}
        if current.get("reason") == "NewReplicaSetAvailable" or current.get("status") == "False":
            return True, "ReplicaSetUpdated", f'ReplicaSet "{name}" is progressing.'
        return True, current.get("reason") or "ReplicaSetUpdated", current.get("message") or \
            f'ReplicaSet "{name}" is progressing.'


def _condition(conditions: dict, type_: str, ok: bool, reason: str, message: str) -> None:
    """Set a DeploymentCondition, keeping ``lastTransitionTime`` while the status holds."""
    now = clock.rfc3339()
    status = "True" if ok else "False"
    current = conditions.get(type_)
    if current and current.get("status") == status and current.get("reason") == reason \
            and current.get("message") == message:
        return
    transition = current["lastTransitionTime"] if current and current.get("status") == status else now
    conditions[type_] = {"type": type_, "status": status, "lastUpdateTime": now, "lastTransitionTime": transition,
                         "reason": reason, "message": message}
