"""NVIDIA KAI Scheduler in the simulated cluster (scheduler mode ``kai``): its pod-grouper and scheduler.

Pods name ``schedulerName: kai-scheduler`` and carry the label ``kai.scheduler/queue: <leaf queue>``. A pod
joins the PodGroup its annotation ``pod-group-name`` names; for a pod without one the pod-grouper creates
``pg-<pod name>-<pod uid>`` (``minMember: 1``, the pod's queue and priority class, its preemptibility from
the label ``kai.scheduler/preemptibility``) and writes the annotation. A PodGroup is *preemptible* when
``spec.preemptibility`` says so, else when its priority is below 100 (KAI's rule). A session:

1. *Fair shares* (``shares.kai_fair_shares``): quotas first, the rest by priority and ``overQuotaWeight``.
2. *Allocate*: leaf queues furthest below their fair share first (``allocated / fairShare``), jobs by
   priority then creation; a job is refused with ``OverLimit`` when its queue (or the parent) would pass its
   ``limit``, and with ``NonPreemptibleOverQuota`` when a non-preemptible job would take its queue's
   non-preemptible allocation past its quota; otherwise its gang is bound whole or not at all.
3. *Reclaim*: a job that does not fit evicts whole preemptible jobs of other queues when (a) its queue stays
   less saturated than the victim's afterwards (fair share), or (b) its queue stays within quota and the
   victim's stays at or above its own (quota). Victims get a Normal ``Evict`` event on their PodGroup
   ("Pod ns/p was preempted by workload ns/pg.").
4. *Status* (``kai_status``): the PodGroup's ``schedulingConditions`` (type ``UnschedulableOnNodePool``,
   ``reasons[]`` with ``PodSchedulingErrors``/``OverLimit``/``NonPreemptibleOverQuota`` and queue details),
   Normal ``Unschedulable``/``NotReady`` events, the pods' PodScheduled=False ``Unschedulable`` with a
   Warning ``Unschedulable`` event; the Queues' ``allocated``, ``allocatedNonPreemptible``, ``requested``.
"""

from __future__ import annotations

from collections import Counter

from gpupoc.kube.queues import UNLIMITED
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import actors
from gpupoc.sim.controllers import gang_wording as T
from gpupoc.sim.controllers.gang import GangScheduler
from gpupoc.sim.controllers.gang_jobs import Job
from gpupoc.sim.controllers.kai_status import QueueInfo, gpus, write_job_status, write_queues
from gpupoc.sim.controllers.shares import INF, KaiQueueShare, kai_fair_shares, saturation
from gpupoc.sim.controllers.wording import KAI_WORDING
from gpupoc.sim.ports import Placer, Reconciler

QUEUE_LABEL = "kai.scheduler/queue"
LEGACY_QUEUE_LABEL = "runai/queue"
PREEMPTIBILITY_LABEL = "kai.scheduler/preemptibility"
GROUP_ANNOTATION = "pod-group-name"
PREEMPTIBLE_BELOW = 100  # priority values below are preemptible unless said otherwise
Key = tuple[str, str]


def pod_group_name(pod: dict) -> str:
    meta = pod["metadata"]
    return f"pg-{meta['name']}-{meta.get('uid', '')}"


def implicit_podgroup(pod: dict) -> dict:
    """The PodGroup KAI's pod-grouper makes for a pod without an owner."""
    meta, spec = pod["metadata"], pod.get("spec", {})
    labels = meta.get("labels") or {}
    queue = labels.get(QUEUE_LABEL) or labels.get(LEGACY_QUEUE_LABEL) or ""
    pg_spec: dict = {"minMember": 1, "queue": queue}
    pc = labels.get("priorityClassName") or spec.get("priorityClassName")
    if pc:
        pg_spec["priorityClassName"] = pc
    if labels.get(PREEMPTIBILITY_LABEL) in ("preemptible", "non-preemptible"):
        pg_spec["preemptibility"] = labels[PREEMPTIBILITY_LABEL]
    return {"metadata": {"name": pod_group_name(pod), "namespace": meta.get("namespace", ""),
                         "labels": {QUEUE_LABEL: queue} if queue else {},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"],
                                              "uid": meta.get("uid", ""), "controller": True,
                                              "blockOwnerDeletion": True}]},
            "spec": pg_spec, "status": {}}


class Kai(GangScheduler):
    """KAI's pod-grouper and scheduler for one cluster (see module docstring)."""

    scheduler_name = "kai-scheduler"
    group_keys = (GROUP_ANNOTATION,)
    wording = KAI_WORDING
    actor = actors.KAI

    implicit_podgroup = staticmethod(implicit_podgroup)

    # -- a session ----------------------------------------------------------------------------------
    def _queues(self) -> dict[str, QueueInfo]:
        out = {}
        for q in self.store.list("queues"):
            spec = q.get("spec") or {}
            gpu = (spec.get("resources") or {}).get("gpu") or {}
            out[q["metadata"]["name"]] = QueueInfo(
                q["metadata"]["name"], spec.get("parentQueue") or None, int(spec.get("priority", 100)),
                float(gpu.get("quota", 0)), float(gpu.get("overQuotaWeight", 1)), float(gpu.get("limit", UNLIMITED)))
        return out

    def _jobs(self, queues: dict[str, QueueInfo]) -> list[Job]:
        jobs = []
        for pg in self.store.list("podgroups"):
            meta, spec = pg["metadata"], pg.get("spec") or {}
            key = (meta["namespace"], meta["name"])
            if spec.get("queue") not in queues:
                continue
            group = self.index.group(key)
            prio = self.priority_of(spec.get("priorityClassName"), group)
            mode = spec.get("preemptibility")
            preemptible = mode == "preemptible" if mode in ("preemptible", "non-preemptible") else prio < PREEMPTIBLE_BELOW
            jobs.append(Job(key, pg, group, spec["queue"], max(1, int(spec.get("minMember") or 1)), prio,
                            meta.get("creationTimestamp", ""), preemptible, self.creation_order(key)))
        return jobs

    def session(self, now: float) -> int:
        queues = self._queues()
        jobs = self._jobs(queues)
        total = float(sum(len(g) for g in self.state.inventory.gpus.values()))
        for j in jobs:
            for name in self._chain(queues, j.queue):
                q = queues[name]
                q.allocated += j.allocated_gpus
                q.requested += j.allocated_gpus + j.group.gpus_of("pending", "gated")
                if not j.preemptible:
                    q.non_preemptible += j.allocated_gpus
        for j in self.pipelined(jobs):
            for name in self._chain(queues, j.queue):
                queues[name].allocated += j.min_gpus()
        shares = kai_fair_shares([KaiQueueShare(q.name, q.parent, q.quota, q.weight, q.limit, q.priority,
                                                q.requested) for q in queues.values()], total, self.weighted)
        for name, share in shares.items():
            queues[name].fair_share = share
        results: dict[Key, tuple] = {}
        bound = self._allocate(jobs, queues, results)
        if self.reclaims:
            self._reclaim(jobs, queues, results)
        for j in jobs:
            write_job_status(self, j, results.get(j.key), queues, now)
        write_queues(self, queues)
        return bound

    def _chain(self, queues: dict[str, QueueInfo], name: str) -> list[str]:
        out = []
        while name in queues and name not in out:
            out.append(name)
            name = queues[name].parent or ""
        return out

    def _queue_order(self, q: QueueInfo, head: Job) -> tuple:
        if not self.weighted:
            return (head.created, head.seq)
        return (-q.priority, saturation(q.allocated, q.fair_share), q.name)

    def _allocate(self, jobs: list[Job], queues: dict[str, QueueInfo], results: dict) -> int:
        waiting: dict[str, list[Job]] = {}
        for j in sorted(jobs, key=lambda j: (-j.priority, j.created, j.seq)):
            if j.group.members["pending"] and j.total >= j.min_member:
                waiting.setdefault(j.queue, []).append(j)
        bound = 0
        while waiting:
            name = min(waiting, key=lambda n: self._queue_order(queues[n], waiting[n][0]))
            j = waiting[name].pop(0)
            if not waiting[name]:
                del waiting[name]
            pipe = j.min_gpus() if j.key in self.reclaiming else 0  # already counted for its queue
            for q in self._chain(queues, j.queue):
                queues[q].allocated -= pipe
            refusal = self._capacity(j, queues)
            placement = self.place(j, self._room(j, queues)) if refusal is None else None
            gpus = sum(j.group.gpus.get(k, 0) for k, _, _ in placement.placed) if placement and placement.bound else 0
            for q in self._chain(queues, j.queue):
                queues[q].allocated += gpus if gpus else pipe
                if not j.preemptible:
                    queues[q].non_preemptible += gpus
            if placement is None:
                results[j.key] = ("refused", refusal)
                continue
            if placement.bound:
                bound += len(placement.placed)
            results[j.key] = ("placed" if placement.bound else "failed", placement)
        return bound

    def _request(self, j: Job) -> float:
        return float(j.min_gpus() if j.need else j.group.gpus_of("pending"))

    def _room(self, j: Job, queues: dict[str, QueueInfo]) -> float:
        room = INF
        for name in self._chain(queues, j.queue):
            q = queues[name]
            if q.limit != UNLIMITED:
                room = min(room, q.limit - q.allocated)
            if not j.preemptible and q.quota != UNLIMITED:
                room = min(room, q.quota - q.non_preemptible)
        return room

    def _capacity(self, j: Job, queues: dict[str, QueueInfo]) -> tuple[str, str, dict] | None:
        """(reason, message, queue details) when the queue's limit or non-preemptible quota refuses ``j``."""
        req = self._request(j)
        for name in self._chain(queues, j.queue):
            q = queues[name]
            if q.limit != UNLIMITED and q.allocated + req > q.limit:
                return T.OVER_LIMIT, T.kai_over_limit(q.name, q.limit, q.allocated, req), self._details(q, j, req)
            if not j.preemptible and q.quota != UNLIMITED and q.non_preemptible + req > q.quota:
                return (T.NON_PREEMPTIBLE_OVER_QUOTA, T.kai_non_preemptible_over_quota(q.name, req, q.quota,
                                                                                        q.non_preemptible),
                        self._details(q, j, req))
        return None

    def _details(self, q: QueueInfo, j: Job, req: float) -> dict:
        return {"queueDetails": {
            "name": q.name, "queueRequestedResources": gpus(q.requested), "queueDeservedResources": gpus(q.quota),
            "queueAllocatedResources": gpus(q.allocated), "queueAllocatedNonPreemptibleResources": gpus(q.non_preemptible),
            "queueResourceLimits": gpus(q.limit), "podGroupRequestedResources": gpus(req),
            "podGroupRequestedNonPreemptibleResources": gpus(0 if j.preemptible else req)}}

    # -- reclaim ------------------------------------------------------------------------------------
    def _reclaim(self, jobs: list[Job], queues: dict[str, QueueInfo], results: dict) -> None:
        by_key = {j.key: j for j in jobs}
        for key, (kind, _) in list(results.items()):
            j = by_key[key]
            if kind != "failed" or key in self.reclaiming:
                continue
            victims = self._victims(j, jobs, queues)
            if not victims:
                continue
            evicted: list[Key] = []
            for v in victims:
                evicted += self.evict(v, lambda pod, v=v: T.kai_reclaim(pod["metadata"]["namespace"],
                                                                       pod["metadata"]["name"], j.key[0], j.key[1]),
                                      event_on_group=True)
                for name in self._chain(queues, v.queue):
                    queues[name].allocated -= v.allocated_gpus
            for name in self._chain(queues, j.queue):  # the reclaimer's GPUs, pipelined onto the freed ones
                queues[name].allocated += j.min_gpus()
            self.reclaiming[key] = set(evicted)

    def _victims(self, j: Job, jobs: list[Job], queues: dict[str, QueueInfo]) -> list[Job]:
        r = queues[j.queue]
        g = float(j.min_gpus())
        candidates = sorted((v for v in jobs if v.queue != j.queue and v.preemptible and v.group.members["active"]),
                            key=lambda v: (v.created, v.seq), reverse=True)
        candidates.sort(key=lambda v: (-saturation(queues[v.queue].allocated, queues[v.queue].fair_share), v.priority))
        strategies = []
        if self.weighted:
            strategies.append(lambda v, left: saturation(left[v.queue] - v.allocated_gpus, queues[v.queue].fair_share)
                              > saturation(r.allocated + g, r.fair_share))
        if r.quota == UNLIMITED or r.allocated + g <= r.quota:
            strategies.append(lambda v, left: queues[v.queue].quota != UNLIMITED
                              and left[v.queue] - v.allocated_gpus >= queues[v.queue].quota)
        for allowed in strategies:
            left = Counter({n: q.allocated for n, q in queues.items()})
            chosen: list[Job] = []
            for v in candidates:
                if allowed(v, left):
                    chosen.append(v)
                    left[v.queue] -= v.allocated_gpus
                    if self.fits_after(j, chosen):
                        return chosen
        return []


def kai_for(state: ClusterState, placer: Placer) -> Reconciler:
    """The state's KAI scheduler, created on first use, placing pods through ``placer`` (kube-scheduler's filters)."""
    if state.kai is None:
        state.kai = Kai(state, placer)
    return state.kai
