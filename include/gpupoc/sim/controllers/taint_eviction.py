"""The taint-eviction controller: pods on a node with ``NoExecute`` taints are evicted after their tolerations
allow, as kube-controller-manager's ``taint-eviction-controller`` does it
(kubernetes ``pkg/controller/tainteviction/taint_eviction.go``):

- a pod that does not tolerate every ``NoExecute`` taint of its node is evicted at once;
- a pod that tolerates them all is evicted the smallest ``tolerationSeconds`` of the tolerations used after the
  controller first saw the taints (``processPodOnNode``: start time, trigger time); tolerations without
  ``tolerationSeconds`` tolerate forever (``getMinTolerationTime``: -1), ``tolerationSeconds <= 0`` means at once;
- taints removed before that time cancel the eviction (event ``TaintManagerEviction`` "Cancelling deletion of
  Pod <ns>/<name>").

The eviction itself (``deletePodHandler`` / ``addConditionAndDeletePod``): event ``TaintManagerEviction``
"Marking for deletion Pod <ns>/<name>", condition ``DisruptionTarget`` reason ``DeletionByTaintManager``
"Taint manager: deleting due to NoExecute taint", then a graceful delete, both written with the
node-controller's credentials, then the pod-disrupted signal (``state.hooks``: under a recreating behaviour
profile the Job controller replaces the pod). On a node whose kubelet still runs, the kubelet then stops the containers and
removes the pod. On a lost node (``nodes.failures``) nothing answers the delete; the simulated cluster then
ends the pod the way ``nodes.evict_pod`` shows a lost node's pod (Failed, NodeLost, GPUs freed).

Pods get their ``node.kubernetes.io/not-ready`` and ``unreachable`` tolerations (300 s) from the
DefaultTolerationSeconds admission plug-in (``gpupoc.sim.admission``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import actors, disruption, nodes
from gpupoc.sim.controllers import kubelet_status as ks
from gpupoc.sim.controllers.scheduling import tolerates
from gpupoc.sim.events import NORMAL

EVENT_REASON = "TaintManagerEviction"
CONDITION_REASON = "DeletionByTaintManager"
CONDITION_MESSAGE = "Taint manager: deleting due to NoExecute taint"
COMPONENT = "taint-eviction-controller"
PodKey = tuple[str, str]


def no_execute_taints(node: dict) -> list[dict]:
    """The node's ``NoExecute`` taints (``getNoExecuteTaints``)."""
    return [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("effect") == "NoExecute"]


def matching_tolerations(taints: list[dict], tolerations: list[dict]) -> tuple[bool, list[dict]]:
    """(every taint tolerated, the tolerations used), as ``v1helper.GetMatchingTolerations``."""
    if not taints:
        return True, []
    if not tolerations:
        return False, []
    used: list[dict] = []
    for taint in taints:
        match = next((t for t in tolerations if tolerates(t, taint)), None)
        if match is None:
            return False, []
        used.append(match)
    return True, used


def min_toleration_seconds(used: list[dict]) -> float | None:
    """Seconds until eviction for the tolerations used: None tolerates forever (``getMinTolerationTime``)."""
    if not used:
        return 0.0
    seconds = [t.get("tolerationSeconds") for t in used if t.get("tolerationSeconds") is not None]
    if not seconds:
        return None
    return max(float(min(int(s) for s in seconds)), 0.0)


def eviction_delay(node: dict, pod: dict) -> float | None:
    """Seconds after the taints were seen that ``pod`` is evicted from ``node`` (None: never)."""
    taints = no_execute_taints(node)
    if not taints:
        return None
    tolerated, used = matching_tolerations(taints, (pod.get("spec") or {}).get("tolerations") or [])
    return min_toleration_seconds(used) if tolerated else 0.0


@dataclass
class Scheduled:
    created: float  # time.monotonic() when the controller first saw the taints for this pod
    fire_at: float
    uid: str


@dataclass
class TaintEviction:
    """The controller's memory: the evictions it scheduled, per pod."""

    state: ClusterState
    scheduled: dict[PodKey, Scheduled] = field(default_factory=dict)
    evicted: set[str] = field(default_factory=set)  # uids already marked: a lost node's pods stay, ended

    def run_pass(self) -> None:
        """Schedule, cancel and carry out evictions. Cheap when no node has a NoExecute taint."""
        now = time.monotonic()
        tainted = {n["metadata"]["name"]: n for n in self.state.store.values("nodes") if no_execute_taints(n)}
        seen: set[PodKey] = set()
        if tainted:
            for pod in self.state.store.list("pods"):
                node = tainted.get((pod.get("spec") or {}).get("nodeName") or "")
                meta = pod.get("metadata") or {}
                if node is None or meta.get("deletionTimestamp") or meta.get("uid", "") in self.evicted:
                    continue
                key = (pod["metadata"].get("namespace", ""), pod["metadata"]["name"])
                seen.add(key)
                self._process(key, pod, node, now)
        for key in [k for k in self.scheduled if k not in seen]:
            self._cancel(key)

    def _process(self, key: PodKey, pod: dict, node: dict, now: float) -> None:
        delay = eviction_delay(node, pod)
        uid = pod["metadata"].get("uid", "")
        if delay is None:
            self._cancel(key)
            return
        current = self.scheduled.get(key)
        if current is None or current.uid != uid:
            current = self.scheduled[key] = Scheduled(now, now + delay, uid)
        elif current.created + delay < current.fire_at:  # a shorter toleration now applies
            current.fire_at = current.created + delay
        if now >= current.fire_at:
            del self.scheduled[key]
            self.evicted.add(uid)
            evict(self.state, pod, node["metadata"]["name"])

    def _cancel(self, key: PodKey) -> None:
        if self.scheduled.pop(key, None) is None:
            return
        pod = self.state.store.get("pods", key[0], key[1])
        if pod is not None:
            self.state.events.record(pod, EVENT_REASON, f"Cancelling deletion of Pod {key[0]}/{key[1]}", NORMAL,
                                     component=COMPONENT)


def evict(state: ClusterState, pod: dict, node: str) -> None:
    """Mark ``pod`` for deletion as the taint-eviction controller does (see the module docstring)."""
    meta = pod["metadata"]
    if (pod.get("status") or {}).get("phase") in ks.TERMINAL:  # the API server removes an ended pod at once
        actors.audit_write(state, actors.TAINT_EVICTION, "delete", pod, request_object=actors.DELETE_OPTIONS)
        state.store.delete("pods", meta["namespace"], meta["name"])
        state.kick()
        return
    if node in nodes.failures(state):
        nodes.evict_pod(state, pod, node)  # records the event, condition and audit itself
        state.kick()
        return
    state.events.record(pod, EVENT_REASON, f"Marking for deletion Pod {meta['namespace']}/{meta['name']}", NORMAL,
                        component=COMPONENT)
    status = pod.setdefault("status", {})
    ks.set_condition(status, "DisruptionTarget", "True", CONDITION_REASON, CONDITION_MESSAGE)
    ks.order_conditions(status)
    state.store.update("pods", pod)
    condition = next(c for c in status["conditions"] if c.get("type") == "DisruptionTarget")
    actors.audit_write(state, actors.TAINT_EVICTION, "patch", pod, subresource="status",
                       request_object={"status": {"conditions": [condition]}})
    disruption.graceful_delete(state, pod)
    actors.audit_write(state, actors.TAINT_EVICTION, "delete", pod, request_object=actors.DELETE_OPTIONS)
    state.hooks.pod_disrupted(pod)
    state.kick()
