"""What the gang schedulers (Volcano, KAI) share: sessions, jobs, all-or-nothing placement, pod messages.

A ``GangScheduler`` runs a *session* when something it schedules changed (a member pod, a PodGroup, a
queue), when GPUs were freed, or every retry interval. In a session the subclass orders the jobs (one per
PodGroup) and calls ``place`` for each: the pending pods are reserved on nodes one by one through the
kube-scheduler's filters and buckets (the ``Placer`` port, ``placement``); if at least ``need`` of them (``minMember``
minus the members already running) fit, all reserved pods are bound, else every reservation is undone and
no pod of the gang is bound. Unless gangs are whole (``reactors.whole_gangs``, off under ``gang-partial``)
the pods that fit are bound anyway.
``evict`` stops the running members of a job (reclaim), in the subclass's words.
"""

from __future__ import annotations

import time
from collections import Counter

from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import actors, disruption
from gpupoc.sim.controllers.gang_jobs import Job, Placement
from gpupoc.sim.controllers.podgroups import Group, GroupIndex
from gpupoc.sim.controllers.scheduling import set_condition
from gpupoc.sim.controllers.wording import Wording
from gpupoc.sim.events import WARNING
from gpupoc.sim.ports import Placer
from gpupoc.sim.store import Change, Conflict

Key = tuple[str, str]


class GangScheduler:
    """Base of the Volcano and KAI controllers (see module docstring)."""

    scheduler_name = ""
    group_keys: tuple[str, ...] = ()
    wording: Wording
    actor: actors.Actor
    spec_resources = ("podgroups", "queues", "priorityclasses")

    def __init__(self, state: ClusterState, placer: Placer):
        self.state = state
        self.store = state.store
        self.sched = placer
        self.index = GroupIndex(state.store, self.scheduler_name, self.group_keys)
        self.retry_seconds = state.config.timing.scheduler_retry_seconds
        reactors = state.reactors
        self.partial = not reactors.whole_gangs
        self.opaque = not reactors.reasons_shown
        self.weighted = reactors.fair_shares  # fair shares weigh queues; else creation order
        self.reclaims = reactors.reclaim_across_queues
        self._specs_version = 0
        self._specs: dict[tuple, object] = {}  # (resource, namespace, name) -> spec, to ignore status writes
        self._seen: tuple[int, int, int] | None = None
        self._last_full = 0.0
        self._shown: dict[Key, tuple[str, str]] = {}  # pod -> (reason, message) last written
        self._reported: dict[tuple, float] = {}  # (object key, reason) -> last event time
        self.sessions = 0
        self.enqueued: set[Key] = set()  # jobs enqueued in the current session
        self._created: dict[Key, int] = {}  # PodGroup -> order in which it was created
        self._fit_cache: dict[tuple, str] = {}  # (pod shape, bucket moves) -> fit error
        self.reclaiming: dict[Key, set[Key]] = {}  # reclaimer job -> its victims' pods still there
        state.store.add_listener(self._on_change)

    def _on_change(self, change: Change) -> None:
        if change.resource == "podgroups" and change.type in ("ADDED", "DELETED"):
            meta = change.obj["metadata"]
            key = (meta.get("namespace", ""), meta["name"])
            if change.type == "ADDED":
                self._created[key] = len(self._created)
            else:
                self._created.pop(key, None)
                for k in [k for k in self._reported if k[:2] == key]:
                    del self._reported[k]
        if change.resource in self.spec_resources:
            spec = change.obj.get("spec") if change.resource != "priorityclasses" else change.obj.get("value")
            key = (change.resource, change.obj["metadata"].get("namespace", ""), change.obj["metadata"]["name"])
            if change.type != "MODIFIED" or self._specs.get(key) != spec:
                self._specs_version += 1
            self._specs[key] = None if change.type == "DELETED" else spec
        elif change.resource == "pods" and change.type == "DELETED":
            key = (change.obj["metadata"].get("namespace", ""), change.obj["metadata"]["name"])
            self._shown.pop(key, None)
            self._reported.pop(("pod", key), None)

    # -- the pass -----------------------------------------------------------------------------------
    def run_pass(self) -> int:
        """Group new pods, then run a session when it is due; returns the pods bound."""
        self.group_pods()
        free = self.sched.refresh()
        now = time.monotonic()
        seen = (self.index.version, self._specs_version, free)
        if seen == self._seen and now - self._last_full < self.retry_seconds:
            return 0
        self._last_full = now
        self._fit_cache.clear()
        bound = self.session(now)
        self._seen = (self.index.version, self._specs_version, self.sched.refresh())
        self.sessions += 1
        return bound

    def group_pods(self) -> None:
        """Make a PodGroup for each ungrouped pod (Volcano's PodGroup controller, KAI's pod-grouper) and name
        it on the pod (the first of ``group_keys``)."""
        for key in sorted(self.index.ungrouped):
            pod = self.store.get("pods", *key)
            if pod is None:
                continue
            pg = self.implicit_podgroup(pod)
            name = pg["metadata"]["name"]
            if self.store.get("podgroups", key[0], name) is None:
                try:
                    self.store.create("podgroups", pg)
                except Conflict:
                    pass
            pod["metadata"].setdefault("annotations", {})[self.group_keys[0]] = name
            self.store.update("pods", pod)

    def implicit_podgroup(self, pod: dict) -> dict:
        """The PodGroup the subclass's controller makes for a pod without one."""
        raise NotImplementedError

    def session(self, now: float) -> int:
        raise NotImplementedError

    # -- jobs ---------------------------------------------------------------------------------------
    def creation_order(self, key: Key) -> int:
        return self._created.setdefault(key, len(self._created))

    def priority_of(self, class_name: str | None, group: Group) -> int:
        """A PodGroup's priority: its PriorityClass's value, else its members' highest pod priority."""
        if class_name:
            pc = self.store.get("priorityclasses", None, class_name)
            if pc is not None:
                return int(pc.get("value", 0))
        best = None
        for state in ("pending", "gated", "active"):
            for k in group.members[state]:
                pod = self.store.get("pods", *k)
                if pod is not None:
                    p = int(pod.get("spec", {}).get("priority") or 0)
                    best = p if best is None else max(best, p)
        return best or 0

    # -- placement ----------------------------------------------------------------------------------
    def place(self, job: Job, max_gpus: float = float("inf")) -> Placement:
        """Reserve nodes for the job's pending pods (at most ``max_gpus`` GPUs of them: what its queue may
        still take); bind them if the gang becomes whole (see module)."""
        out = Placement()
        pending = job.pending
        budget = max_gpus
        for i, key in enumerate(pending):
            pod = self.store.get("pods", *key)
            if pod is None:
                continue
            gpus = job.group.gpus.get(key, 0)
            if gpus > budget:
                out.untried = pending[i:]
                break
            node = self.sched.reserve(key, pod)
            if node is None:
                out.failed = (key, pod)
                out.fit_error = self.fit_error(key, pod)
                out.untried = pending[i + 1:]
                break
            out.placed.append((key, pod, node))
            budget -= gpus
        whole = len(out.placed) >= job.need and (out.placed or job.need == 0)
        if whole or (self.partial and out.placed):
            for key, pod, node in out.placed:
                self.sched.commit(key, pod, node, self.wording)
                self._shown.pop(key, None)
            out.bound = bool(out.placed)
        else:
            for _key, pod, node in out.placed:
                self.sched.unreserve(node, pod)
        return out

    def fit_error(self, key: Key, pod: dict) -> str:
        """The scheduler's own text for a pod that fits nowhere (kube-scheduler's filters, its words)."""
        sig = (self.sched.shape_of(pod), self.sched.moves)
        message = None if sig[0][1] else self._fit_cache.get(sig)
        if message is None:
            message = self.wording.unschedulable(self.sched.node_count, self.sched.fit_counts(key, pod), None)
            self._fit_cache[sig] = message
        return message

    # -- what pods and groups say -------------------------------------------------------------------
    def show_pod(self, key: Key, reason: str, message: str, now: float) -> None:
        """PodScheduled=False with ``reason``/``message`` on a pending pod, and the scheduler's Warning
        event (again after the retry interval while it stays the same)."""
        if self.opaque:
            reason, message = "Unschedulable", self.state.reactors.opaque_fit_error(self.sched.node_count)
        pod = self.store.get("pods", *key)
        if pod is None or pod.get("spec", {}).get("nodeName"):
            return
        if self._shown.get(key) != (reason, message):
            self._shown[key] = (reason, message)
            if set_condition(pod, "PodScheduled", "False", reason, message):
                self.store.update("pods", pod)
        if self.due_event(("pod", key), now):
            self.state.events.record(pod, self.wording.failed_reason, message, WARNING,
                                     component=self.wording.component)

    def due_event(self, key: tuple, now: float) -> bool:
        last = self._reported.get(key)
        if last is not None and now - last < self.retry_seconds:
            return False
        self._reported[key] = now
        return True

    def record(self, obj: dict, reason: str, message: str, type_: str, now: float, every: bool = False) -> None:
        """An event on a PodGroup or Queue (none under ``reasons-opaque``), at most once per retry interval
        for the same object, reason and type unless ``every``."""
        if self.opaque:
            return
        meta = obj["metadata"]
        if every or self.due_event((meta.get("namespace", ""), meta["name"], reason, type_), now):
            self.state.events.record(obj, reason, message, type_, component=self.wording.component)

    # -- eviction (reclaim) -------------------------------------------------------------------------
    def pipelined(self, jobs: list[Job]) -> list[Job]:
        """Jobs still waiting for the GPUs their reclaim frees (the victims not gone yet): their GPUs count as
        their queue's already, as Volcano's and KAI's pipelined tasks do."""
        for key, victims in list(self.reclaiming.items()):
            left = {v for v in victims if self.store.get("pods", *v) is not None}
            if left:
                self.reclaiming[key] = left
            else:
                del self.reclaiming[key]
        return [j for j in jobs if j.key in self.reclaiming and j.need]

    def fits_after(self, j: Job, victims: list[Job]) -> bool:
        """Whether ``j``'s gang would fit once ``victims`` are gone (simulated on the free-GPU buckets)."""
        freed = self.freed_by(victims)
        for node, gpus in freed.items():
            self.sched.adjust(node, gpus)
        placed, ok = [], True
        for key in j.pending[: max(j.need, 1)]:
            pod = self.store.get("pods", *key)
            node = self.sched.reserve(key, pod) if pod is not None else None
            if node is None:
                ok = False
                break
            placed.append((node, pod))
        for node, pod in placed:
            self.sched.unreserve(node, pod)
        for node, gpus in freed.items():
            self.sched.adjust(node, -gpus)
        return ok

    def freed_by(self, victims: list[Job]) -> Counter:
        """GPUs per node the running members of ``victims`` hold."""
        out: Counter = Counter()
        for v in victims:
            for k in v.group.members["active"]:
                pod = self.store.get("pods", *k)
                if pod is not None and pod.get("spec", {}).get("nodeName"):
                    out[pod["spec"]["nodeName"]] += v.group.gpus.get(k, 0)
        return out

    def evict(self, job: Job, message_of, event_on_group: bool) -> list[Key]:
        """Stop every running member of ``job`` (``message_of(pod)`` says why); returns their keys."""
        out = []
        for key in sorted(job.group.members["active"]):
            pod = self.store.get("pods", *key)
            if pod is None:
                continue
            message = message_of(pod)
            if event_on_group:
                disruption.evict(self.state, pod, self.actor, self.wording, "Evict", message, job.obj)
            else:
                disruption.evict(self.state, pod, self.actor, self.wording, "Evict", message)
            out.append(key)
        return out
