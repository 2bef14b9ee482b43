"""What happens to a pod the platform takes away: marked in its platform's words, deleted, audited, replaced.

``preempt`` stops a victim of the scheduler's preemption:
- kube-scheduler (default): condition DisruptionTarget reason PreemptionByScheduler, event ``Preempted``
  "Preempted by pod <uid> on node <node>", graceful delete, as ``system:kube-scheduler``;
- ``volcano-wording``: Warning event ``Evict`` "Pod is evicted, because of preempt", condition Ready=False
  reason ``Evict``, graceful delete, as Volcano's scheduler service account;
- ``kai-wording``: event ``Evict`` "Pod <ns>/<pod> was preempted by higher priority workload <ns>/<group>"
  (KAI records it on the PodGroup; here it is on the pod, there are no PodGroups), graceful delete, as KAI's
  service account;
- ``kueue-requeue``: Kueue stops it (``kueue_evict.stop_pod``), graceful delete, as Kueue's service account.
``evicted`` is called by the taint-eviction controller after it failed a pod of a lost node. Each ends by
signalling ``state.hooks.pod_disrupted``; under a recreating profile the Job controller (``recreate``),
which subscribes to it, replaces the pod.
"""

from __future__ import annotations

from datetime import timedelta

from gpupoc.sim import clock
from gpupoc.sim.behaviours import Behaviour
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import actors, kueue_evict
from gpupoc.sim.controllers import scheduling as S
from gpupoc.sim.controllers import wording as W
from gpupoc.sim.events import NORMAL, WARNING


def _status_patch(pod: dict, type_: str) -> dict:
    cond = next((c for c in pod.get("status", {}).get("conditions") or [] if c.get("type") == type_), None)
    return {"status": {"conditions": [cond]}} if cond else {}


def preempt(state: ClusterState, victim: dict, preemptor: dict, node: str, wording: W.Wording) -> None:
    """Stop ``victim`` so that ``preemptor`` fits on ``node`` (see module docstring)."""
    if state.behaves(Behaviour.KUEUE_REQUEUE):
        actor, condition = actors.KUEUE, "TerminationTarget"
        kueue_evict.stop_pod(state, victim, kueue_evict.preemption_message(state, preemptor))
    elif wording.dialect == W.VOLCANO:
        actor, condition = actors.VOLCANO, "Ready"
        message = W.volcano_evict_message()
        state.events.record(victim, "Evict", message, WARNING, component=wording.component)
        S.set_condition(victim, "Ready", "False", "Evict", message)
        state.store.update("pods", victim)
    elif wording.dialect == W.KAI:
        actor, condition = actors.KAI, ""
        state.events.record(victim, "Evict", W.kai_preempt_message(victim, preemptor), NORMAL,
                            component=wording.component)
    else:
        actor, condition = actors.KUBE_SCHEDULER, "DisruptionTarget"
        scheduler = preemptor.get("spec", {}).get("schedulerName", S.DEFAULT_SCHEDULER)
        S.set_condition(victim, "DisruptionTarget", "True", "PreemptionByScheduler",
                        S.DISRUPTION_MESSAGE.format(scheduler=scheduler))
        state.store.update("pods", victim)
        uid = preemptor["metadata"].get("uid", "")
        state.events.record(victim, "Preempted", f"Preempted by pod {uid} on node {node}", NORMAL,
                            component=S.DEFAULT_SCHEDULER)
    if condition:
        actors.audit_write(state, actor, "patch", victim, subresource="status",
                           request_object=_status_patch(victim, condition))
    graceful_delete(state, victim)
    actors.audit_write(state, actor, "delete", victim, request_object=actors.DELETE_OPTIONS)
    state.hooks.pod_disrupted(victim)


def evict(state: ClusterState, victim: dict, actor: actors.Actor, wording: W.Wording, reason: str, message: str,
          event_on: dict | None = None) -> None:
    """A gang scheduler's reclaim stops ``victim``: Volcano's Warning ``Evict`` on the pod with Ready=False
    reason ``Evict``; KAI's Normal ``Evict`` on the victim's PodGroup (``event_on``). Then a graceful
    delete, audited as ``actor``, and the pod-disrupted signal."""
    if event_on is None:
        state.events.record(victim, reason, message, WARNING, component=wording.component)
        S.set_condition(victim, "Ready", "False", reason, message)
        state.store.update("pods", victim)
        actors.audit_write(state, actor, "patch", victim, subresource="status",
                           request_object=_status_patch(victim, "Ready"))
    else:
        state.events.record(event_on, reason, message, NORMAL, component=wording.component)
    graceful_delete(state, victim)
    actors.audit_write(state, actor, "delete", victim, request_object=actors.DELETE_OPTIONS)
    state.hooks.pod_disrupted(victim)


def kueue_stop(state: ClusterState, victim: dict, message: str) -> None:
    """Kueue's preemption stops a pod of an evicted Workload: marked (``kueue_evict.mark_stopped``), deleted
    gracefully, audited as Kueue's service account, then the pod-disrupted signal."""
    kueue_evict.mark_stopped(state, victim, message)
    actors.audit_write(state, actors.KUEUE, "patch", victim, subresource="status",
                       request_object=_status_patch(victim, "TerminationTarget"))
    graceful_delete(state, victim)
    actors.audit_write(state, actors.KUEUE, "delete", victim, request_object=actors.DELETE_OPTIONS)
    state.hooks.pod_disrupted(victim)


def graceful_delete(state: ClusterState, pod: dict) -> None:
    """Set the pod's deletionTimestamp its grace period ahead (30 s unless the pod says), as a DELETE does."""
    grace = pod.get("spec", {}).get("terminationGracePeriodSeconds")
    grace = 30 if grace is None else int(grace)
    pod["metadata"]["deletionTimestamp"] = clock.rfc3339(clock.now() + timedelta(seconds=grace))
    pod["metadata"]["deletionGracePeriodSeconds"] = grace
    state.store.update("pods", pod)


def evicted(state: ClusterState, pod: dict) -> None:
    """The taint-eviction controller failed ``pod`` (its node is lost): audit its writes as the node-controller
    service account (status patch, delete), then the pod-disrupted signal."""
    actors.audit_write(state, actors.TAINT_EVICTION, "patch", pod, subresource="status",
                       request_object=_status_patch(pod, "DisruptionTarget"))
    actors.audit_write(state, actors.TAINT_EVICTION, "delete", pod, request_object=actors.DELETE_OPTIONS)
    state.hooks.pod_disrupted(pod)
