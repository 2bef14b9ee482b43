"""Volcano in the simulated cluster (scheduler mode ``volcano``): its PodGroup controller and its scheduler.

Pods name ``schedulerName: volcano``. A pod belongs to the PodGroup its annotation
``scheduling.k8s.io/group-name`` (or ``scheduling.volcano.sh/group-name``) names; for a pod without one the
PodGroup controller creates ``podgroup-<pod uid>`` (``minMember: 1``, the pod's priority class, its
requests as ``minResources``, the queue of its ``scheduling.volcano.sh/queue-name`` annotation, else
``default``) and writes the annotation on the pod. A session, as Volcano's ``enqueue, allocate, reclaim``:

1. *Validity* (gang): a PodGroup with fewer pods than ``minMember`` gets ``Unschedulable`` reason
   ``NotEnoughTasks``.
2. *Enqueue*: a ``Pending`` PodGroup becomes ``Inqueue`` when its ``minResources`` fit both the cluster's
   overcommitted idle GPUs (overcommit plugin) and its queue's capability (proportion plugin); otherwise a
   Normal ``Unschedulable`` event says which ("resource in cluster is overused: overused nvidia.com/gpu",
   "queue resource quota insufficient: insufficient nvidia.com/gpu").
3. *Allocate*: queues by share (allocated / deserved, ``shares.volcano_deserved``), a queue at its deserved
   share waits; jobs by priority, then creation. A gang is bound whole or not at all (``GangScheduler``).
4. *Reclaim*: a job whose queue is below its deserved share evicts whole jobs of reclaimable queues above
   theirs ("Pod is evicted, because of reclaim") when that makes the gang fit.
5. *Status*: PodGroup phase (Pending, Inqueue, Running, Unknown, Completed), conditions ``Unschedulable``
   (NotEnoughResources with the gang message) or ``Scheduled``, events on the PodGroup (Warning
   ``Unschedulable``, Normal ``Scheduled`` "pod group is ready") and on pods (PodScheduled=False with
   reason ``Unschedulable``/``Schedulable``/``Undetermined``, Warning ``FailedScheduling``); Queue status
   (state Open, allocated GPUs, PodGroups per phase).
"""

from __future__ import annotations

import uuid
from collections import Counter

from gpupoc.kube.resources import GPU
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import actors
from gpupoc.sim.controllers import gang_wording as T
from gpupoc.sim.controllers.gang import GangScheduler
from gpupoc.sim.controllers.gang_jobs import Job
from gpupoc.sim.controllers.shares import INF, VolcanoQueueShare, volcano_deserved
from gpupoc.sim.controllers.volcano_status import write_job_status
from gpupoc.sim.controllers.wording import VOLCANO_WORDING, volcano_evict_message
from gpupoc.sim.events import NORMAL
from gpupoc.sim.ports import Placer, Reconciler

GROUP_NAME_KEYS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")
QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
PODGROUP_PREFIX = "podgroup-"
DEFAULT_QUEUE = "default"
Key = tuple[str, str]


def _gpus(resources: dict | None) -> float | None:
    if not resources or GPU not in resources:
        return None
    try:
        return float(str(resources[GPU]))
    except ValueError:
        return None


def implicit_podgroup(pod: dict) -> dict:
    """The PodGroup Volcano's controller makes for a pod without one (``createNormalPodPGIfNotExist``)."""
    meta, spec = pod["metadata"], pod.get("spec", {})
    owner = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), None)
    name = PODGROUP_PREFIX + (owner["uid"] if owner else meta.get("uid", ""))
    refs = meta.get("ownerReferences") if owner else [
        {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta.get("uid", ""), "controller": True,
         "blockOwnerDeletion": True}]
    requests: Counter = Counter()
    for c in spec.get("containers") or []:
        for k, v in ((c.get("resources") or {}).get("requests") or {}).items():
            requests[k] = v
    pg_spec: dict = {"minMember": 1, "minResources": {k: str(v) for k, v in sorted(requests.items())}}
    if spec.get("priorityClassName"):
        pg_spec["priorityClassName"] = spec["priorityClassName"]
    queue = (meta.get("annotations") or {}).get(QUEUE_ANNOTATION)
    if queue:
        pg_spec["queue"] = queue
    return {"metadata": {"name": name, "namespace": meta.get("namespace", ""), "ownerReferences": refs,
                         "annotations": {}, "labels": {}},
            "spec": pg_spec, "status": {"phase": "Pending"}}


class Volcano(GangScheduler):
    """Volcano's PodGroup controller and scheduler for one cluster (see module docstring)."""

    scheduler_name = "volcano"
    group_keys = GROUP_NAME_KEYS
    wording = VOLCANO_WORDING
    actor = actors.VOLCANO

    implicit_podgroup = staticmethod(implicit_podgroup)

    def __init__(self, state: ClusterState, placer: Placer):
        super().__init__(state, placer)
        self.overcommit = state.config.volcano.overcommit_factor

    # -- a session ----------------------------------------------------------------------------------
    def _jobs(self) -> list[Job]:
        jobs = []
        for pg in self.store.list("podgroups"):
            meta, spec = pg["metadata"], pg.get("spec") or {}
            key = (meta["namespace"], meta["name"])
            group = self.index.group(key)
            jobs.append(Job(key, pg, group, spec.get("queue") or DEFAULT_QUEUE, int(spec.get("minMember") or 0),
                            self.priority_of(spec.get("priorityClassName"), group), meta.get("creationTimestamp", ""),
                            seq=self.creation_order(key)))
        return jobs

    def session(self, now: float) -> int:
        self.session_uid = str(uuid.uuid4())
        self.enqueued = set()
        total = float(sum(len(g) for g in self.state.inventory.gpus.values()))
        queues = {q["metadata"]["name"]: q for q in self.store.list("queues")}
        jobs = [j for j in self._jobs() if j.queue in queues]
        alloc: Counter = Counter()
        request: Counter = Counter()
        for j in jobs:
            alloc[j.queue] += j.allocated_gpus
            request[j.queue] += j.allocated_gpus + j.group.gpus_of("pending", "gated")
        for j in self.pipelined(jobs):
            alloc[j.queue] += j.min_gpus()
        deserved = volcano_deserved([self._share(q, request[name]) for name, q in queues.items()], total,
                                    self.weighted)
        real_cap = self._real_capability(queues, total)
        results: dict[Key, tuple[str, object]] = {}
        valid = []
        for j in jobs:
            if j.total < j.min_member:
                results[j.key] = ("invalid", None)
            else:
                valid.append(j)
        self._enqueue(valid, queues, alloc, real_cap, total, now, results)
        bound = self._allocate(valid, alloc, deserved, real_cap, queues, results)
        if self.reclaims:
            self._reclaim(valid, alloc, deserved, queues, results)
        for j in jobs:
            self._write_status(j, results.get(j.key), now)
        self._write_queues(queues, jobs, alloc)
        return bound

    def _share(self, q: dict, request: float) -> VolcanoQueueShare:
        spec = q.get("spec") or {}
        cap = _gpus(spec.get("capability"))
        return VolcanoQueueShare(q["metadata"]["name"], int(spec.get("weight") or 1), request,
                                 _gpus((spec.get("guarantee") or {}).get("resource")) or 0.0,
                                 INF if cap is None else cap, _gpus(spec.get("deserved")))

    def _real_capability(self, queues: dict[str, dict], total: float) -> dict[str, float]:
        """min(capability, cluster - the other queues' guarantees) per queue."""
        guarantees = {n: _gpus(((q.get("spec") or {}).get("guarantee") or {}).get("resource")) or 0.0
                      for n, q in queues.items()}
        out = {}
        for n, q in queues.items():
            cap = _gpus((q.get("spec") or {}).get("capability"))
            rest = total - sum(g for m, g in guarantees.items() if m != n)
            out[n] = rest if cap is None else min(cap, rest)
        return out

    def _phase(self, j: Job) -> str:
        return (j.obj.get("status") or {}).get("phase") or "Pending"

    def _enqueue(self, jobs: list[Job], queues: dict, alloc: Counter, real_cap: dict, total: float, now: float,
                 results: dict) -> None:
        idle = total * self.overcommit - sum(alloc.values())
        inqueue: Counter = Counter()
        for j in jobs:
            if self._phase(j) == "Inqueue":
                inqueue[j.queue] += _gpus((j.obj.get("spec") or {}).get("minResources")) or 0.0
        for j in sorted((j for j in jobs if self._phase(j) == "Pending"), key=self._job_order):
            need = _gpus((j.obj.get("spec") or {}).get("minResources"))
            if need is None:  # best effort: always enqueued
                results[j.key] = ("inqueue", None)
                self.enqueued.add(j.key)
                continue
            if sum(inqueue.values()) + need > idle:
                self.record(j.obj, "Unschedulable", T.volcano_cluster_overused(), NORMAL, now)
            elif need + alloc[j.queue] + inqueue[j.queue] > real_cap[j.queue]:
                self.record(j.obj, "Unschedulable", T.volcano_queue_insufficient(), NORMAL, now)
            else:
                inqueue[j.queue] += need
                results[j.key] = ("inqueue", None)
                self.enqueued.add(j.key)

    def _job_order(self, j: Job) -> tuple:
        return (-j.priority, j.created, j.seq)

    def _allocatable(self, j: Job, deserved: dict, real_cap: dict, queues: dict) -> float:
        fixed = _gpus(((queues[j.queue].get("spec") or {}).get("deserved"))) is not None
        if self.weighted and not fixed:
            return deserved.get(j.queue, 0.0)
        return real_cap[j.queue]

    def _allocate(self, jobs: list[Job], alloc: Counter, deserved: dict, real_cap: dict, queues: dict,
                  results: dict) -> int:
        ready = {j.key for j in jobs if results.get(j.key, ("",))[0] == "inqueue"}
        waiting: dict[str, list[Job]] = {}
        for j in sorted(jobs, key=self._job_order):
            if (self._phase(j) != "Pending" or j.key in ready) and j.group.members["pending"]:
                waiting.setdefault(j.queue, []).append(j)
        bound = 0
        while waiting:
            queue = min(waiting, key=lambda q: self._queue_order(q, waiting[q][0], alloc, deserved, queues))
            if self.weighted and deserved.get(queue, 0.0) <= alloc[queue] and not queues_fixed(queues, queue):
                for j in waiting.pop(queue):
                    results.setdefault(j.key, ("overused", None))
                continue
            j = waiting[queue].pop(0)
            if not waiting[queue]:
                del waiting[queue]
            pipe = j.min_gpus() if j.key in self.reclaiming else 0  # already counted for its queue
            room = self._allocatable(j, deserved, real_cap, queues) - alloc[queue] + pipe
            placement = self.place(j, room)
            if placement.bound:
                gpus = sum(j.group.gpus.get(k, 0) for k, _, _ in placement.placed)
                alloc[queue] += gpus - pipe
                bound += len(placement.placed)
            results[j.key] = ("placed" if placement.bound else "failed", placement)
        return bound

    def _queue_order(self, queue: str, head: Job, alloc: Counter, deserved: dict, queues: dict) -> tuple:
        if not self.weighted:
            return (head.created, head.seq)
        prio = -int(((queues[queue].get("spec") or {}).get("priority")) or 0)
        d = deserved.get(queue, 0.0)
        share = alloc[queue] / d if d > 0 else (INF if alloc[queue] else 0.0)
        return (prio, share, queue)

    # -- reclaim ------------------------------------------------------------------------------------
    def _reclaim(self, jobs: list[Job], alloc: Counter, deserved: dict, queues: dict, results: dict) -> None:
        by_key = {j.key: j for j in jobs}
        for key, (kind, _) in list(results.items()):
            j = by_key.get(key)
            if kind != "failed" or j is None or key in self.reclaiming:
                continue
            if alloc[j.queue] + j.min_gpus() > deserved.get(j.queue, 0.0):
                continue  # only a queue below its deserved share reclaims
            victims = self._victims(j, jobs, alloc, deserved, queues)
            if victims:
                evicted = []
                for v in victims:
                    evicted += self.evict(v, lambda _pod: volcano_evict_message("reclaim"), event_on_group=False)
                    alloc[v.queue] -= v.allocated_gpus
                alloc[j.queue] += j.min_gpus()  # pipelined onto the GPUs being freed
                self.reclaiming[key] = set(evicted)

    def _victims(self, j: Job, jobs: list[Job], alloc: Counter, deserved: dict, queues: dict) -> list[Job]:
        """Whole running jobs of reclaimable queues above their deserved share whose GPUs make ``j`` fit."""
        left = Counter(alloc)
        chosen: list[Job] = []
        candidates = sorted((v for v in jobs if v.queue != j.queue and v.group.members["active"]
                             and (queues[v.queue].get("spec") or {}).get("reclaimable", True) is not False),
                            key=lambda v: (v.created, v.seq), reverse=True)
        candidates.sort(key=lambda v: v.priority)  # lowest priority first, newest first among equals
        for v in candidates:
            if left[v.queue] <= deserved.get(v.queue, 0.0):
                continue
            chosen.append(v)
            left[v.queue] -= v.allocated_gpus
            if self.fits_after(j, chosen):
                return chosen
        return []

    # -- status -------------------------------------------------------------------------------------
    def _write_status(self, j: Job, result: tuple | None, now: float) -> None:
        write_job_status(self, j, result, now)

    def _write_queues(self, queues: dict, jobs: list[Job], alloc: Counter) -> None:
        phases: dict[str, Counter] = {n: Counter() for n in queues}
        for j in jobs:
            phases[j.queue][self._phase(j).lower()] += 1
        for name, q in queues.items():
            c = phases[name]
            status = {**(q.get("status") or {}), "state": "Open", "allocated": {GPU: _qty(alloc[name])},
                      "pending": c["pending"], "running": c["running"], "inqueue": c["inqueue"],
                      "unknown": c["unknown"], "completed": c["completed"]}
            if status != q.get("status"):
                q["status"] = status
                self.store.update("queues", q)


def queues_fixed(queues: dict, name: str) -> bool:
    """Whether the queue's deserved share is fixed (``spec.deserved``) rather than weighed."""
    return _gpus(((queues[name].get("spec") or {}).get("deserved"))) is not None


def _qty(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def volcano_for(state: ClusterState, placer: Placer) -> Reconciler:
    """The state's Volcano scheduler, created on first use, placing pods through ``placer`` (kube-scheduler's filters)."""
    if state.volcano is None:
        state.volcano = Volcano(state, placer)
    return state.volcano
