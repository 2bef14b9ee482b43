"""A Job controller for the recreating behaviour profiles (``controller-recreates``, ``kueue-requeue``).

On such a platform every workload pod belongs to a batch/v1 Job. When the platform takes a pod away
(preemption, taint-manager eviction after a node failure), the Job controller creates a replacement at once
(``podReplacementPolicy: TerminatingOrFailed``, the default): a new pod named ``<job>-<5 random chars>`` with the
same labels and annotations, plus the Job's own labels (``batch.kubernetes.io/job-name``,
``batch.kubernetes.io/controller-uid`` and their short forms) and an ownerReference to the Job. The replacement
goes through admission like any create (a refused create, e.g. over quota while the old pod still
terminates, is tried again after a back-off), is audited as the Job controller's service account, and gets
a ``SuccessfulCreate`` event on the Job. After ``BACKOFF_LIMIT`` replacements the Job gives up
(``BackoffLimitExceeded``). The Job object itself is not served (the simulated cluster has no batch API).

A pod's Job is named after the first pod of its line and keeps that name and uid for every replacement.
``recreator_for`` subscribes ``Recreator.replace`` to the pod-disrupted signal (``state.hooks``); before a
replacement is stored the pod-replacing hook lets the queue manager hand it the old pod's Workload.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field

from gpupoc.sim.admission import admit_pod, after_pod_created
from gpupoc.sim.api.status import StatusError
from gpupoc.sim.behaviours import Behaviour
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import actors
from gpupoc.sim.events import NORMAL, WARNING
from gpupoc.sim.store import Conflict, json_copy

log = logging.getLogger(__name__)

JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
BACKOFF_LIMIT = 6  # batch/v1 Job default
RETRY_SECONDS = 1.0
COMPONENT = "job-controller"
Key = tuple[str, str]


@dataclass
class Replacement:
    """A pod to create in place of ``victim`` (the old pod's last state) for Job ``job``."""

    victim: dict
    job: str
    job_uid: str
    next_try: float = 0.0
    attempts: int = 0


@dataclass
class Recreator:
    """The Job controller of one cluster state; ``enabled`` only under a recreating behaviour profile."""

    state: ClusterState
    waiting: list[Replacement] = field(default_factory=list)
    created: dict[str, int] = field(default_factory=dict)  # job uid -> replacements made

    @property
    def enabled(self) -> bool:
        return self.state.behaves(Behaviour.CONTROLLER_RECREATES) or self.state.behaves(Behaviour.KUEUE_REQUEUE)

    def replace(self, victim: dict) -> dict | None:
        """The platform took ``victim`` away (it terminates or failed): create its replacement now if
        admission lets it, else later. Returns the new pod, or None (disabled, waiting, or given up)."""
        if not self.enabled:
            return None
        meta = victim["metadata"]
        labels = meta.get("labels") or {}
        job = labels.get(JOB_NAME_LABEL) or meta["name"]
        job_uid = labels.get(CONTROLLER_UID_LABEL) or str(uuid.uuid5(uuid.NAMESPACE_URL, meta.get("uid", "")))
        if self.created.get(job_uid, 0) >= BACKOFF_LIMIT:
            self._event(victim, job, job_uid, "BackoffLimitExceeded", "Job has reached the specified backoff limit",
                        WARNING)
            return None
        rep = Replacement(json_copy(victim), job, job_uid)
        pod = self._create(rep)
        if pod is None:
            self.waiting.append(rep)
        return pod

    def run_pass(self) -> int:
        """Retry the replacements admission refused; returns how many were created."""
        if not self.waiting:
            return 0
        now, made, still = time.monotonic(), 0, []
        for rep in self.waiting:
            if rep.next_try > now or self._create(rep) is None:
                still.append(rep)
            else:
                made += 1
        self.waiting = still
        return made

    def _create(self, rep: Replacement) -> dict | None:
        state, victim = self.state, rep.victim
        ns = victim["metadata"]["namespace"]
        body = replacement_body(victim, rep.job, rep.job_uid)
        request = json_copy(body)
        rep.attempts += 1
        try:
            pod = admit_pod(state, body, ns)
            state.hooks.pod_replacing((ns, victim["metadata"]["name"]), pod)
            state.store.create("pods", pod)
        except (StatusError, Conflict) as exc:
            rep.next_try = time.monotonic() + min(RETRY_SECONDS * 2 ** (rep.attempts - 1), 30.0)
            log.info("job-controller: replacement for %s/%s not created yet: %s", ns, victim["metadata"]["name"], exc)
            return None
        after_pod_created(state, pod)
        self.created[rep.job_uid] = self.created.get(rep.job_uid, 0) + 1
        actors.audit_write(state, actors.JOB_CONTROLLER, "create", pod, request_object=request, code=201)
        self._event(victim, rep.job, rep.job_uid, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}",
                    NORMAL)
        state.kick()
        return pod

    def _event(self, victim: dict, job: str, job_uid: str, reason: str, message: str, type_: str) -> None:
        owner = {"kind": "Job", "apiVersion": "batch/v1",
                 "metadata": {"name": job, "namespace": victim["metadata"]["namespace"], "uid": job_uid}}
        self.state.events.record(owner, reason, message, type_, component=COMPONENT)


def replacement_body(victim: dict, job: str, job_uid: str) -> dict:
    """The pod the Job controller posts in place of ``victim``: same labels, annotations and spec (unbound,
    ungated), the Job's labels, a generated name and an ownerReference to the Job."""
    meta = victim["metadata"]
    labels = {**(meta.get("labels") or {}), JOB_NAME_LABEL: job, "job-name": job, CONTROLLER_UID_LABEL: job_uid,
              "controller-uid": job_uid}
    spec = json_copy(victim.get("spec") or {})
    for key in ("nodeName", "schedulingGates"):
        spec.pop(key, None)
    out_meta = {"generateName": f"{job[:57]}-", "namespace": meta["namespace"], "labels": labels,
                "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job, "uid": job_uid,
                                     "controller": True, "blockOwnerDeletion": True}]}
    if meta.get("annotations"):
        out_meta["annotations"] = dict(meta["annotations"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": out_meta, "spec": spec}


def recreator_for(state: ClusterState) -> Recreator:
    """The state's Job controller, created on first use and subscribed to the pod-disrupted signal."""
    if state.recreator is None:
        recreator = Recreator(state)
        state.recreator = recreator
        state.hooks.disrupted.append(recreator.replace)
    return state.recreator
