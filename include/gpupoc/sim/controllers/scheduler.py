"""The simulated kube-scheduler: queue order, filters, GPU bin-packing, binding, failure reports, preemption.

Its texts are kube-scheduler's, or Volcano's or KAI's under those behaviour profiles (``wording``); what a
preempted pod goes through is in ``disruption``; ``release-staggered`` holds lifted pods back (``release``).
One ``Scheduler`` per cluster state (``scheduler_for(state)``) keeps indexes current from store changes:
the pending pods (unbound, Pending, ungated, not terminating, for the scheduler's names), the active pods
bound to each node, and per class of identical nodes (same labels except the hostname, taints,
cordon, readiness) buckets of nodes by free GPUs. A pass only looks at pending pods, and only at the
new ones unless capacity was freed, nodes changed or the retry interval passed, so an idle pass is a
few dictionary checks.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter, defaultdict

from gpupoc.sim.behaviours import Behaviour
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import actors
from gpupoc.sim.controllers import scheduling as S
from gpupoc.sim.controllers.placement import PlacementMixin
from gpupoc.sim.controllers.preemption import PreemptionMixin
from gpupoc.sim.controllers.release import StaggeredRelease
from gpupoc.sim.controllers.scheduling import Failure, NodeClass, set_condition
from gpupoc.sim.controllers.wording import KAI, KUBE_WORDING, VOLCANO, Wording, wordings_for
from gpupoc.sim.events import NORMAL, WARNING
from gpupoc.sim.store import Change

Key = tuple[str, str]
TERMINAL = ("Succeeded", "Failed")
# Who binds a pod, by the scheduler's dialect: Volcano and KAI bind as their own service accounts.
BINDERS = {VOLCANO: actors.VOLCANO, KAI: actors.KAI}


def scheduler_for(state: ClusterState) -> "Scheduler":
    """The state's scheduler, created (and subscribed to the store) on first use."""
    if state.scheduler is None:
        state.scheduler = Scheduler(state)
    return state.scheduler


def schedule_pass(state: ClusterState) -> int:
    """Run one scheduling pass; returns how many pods were bound."""
    return scheduler_for(state).run_pass()


class Scheduler(PreemptionMixin, PlacementMixin):
    """kube-scheduler for one simulated cluster (see module docstring)."""

    def __init__(self, state: ClusterState):
        self.state = state
        self.store = state.store
        self._seq = itertools.count()
        self._pending: dict[Key, tuple] = {}  # pod key -> queue key
        self._new: set[Key] = set()  # pending pods never tried since they became pending
        self._node_of: dict[Key, str] = {}  # active (non-terminal) bound pod -> node
        self._prio_of: dict[Key, int] = {}
        self._node_pods: dict[str, set[Key]] = defaultdict(set)
        self._prio_count: Counter = Counter()  # priorities of active bound pods
        self._nominated: dict[Key, tuple[str, int, int]] = {}  # preemptor -> (node, priority, gpus)
        self._victims: set[Key] = set()  # preempted pods still terminating
        self._reports: dict[Key, tuple[float, str]] = {}  # last FailedScheduling (time, message)
        self._shown: dict[Key, str] = {}  # message last written to the PodScheduled condition
        self._pod_info: dict[str, tuple] = {}  # uid -> (signature, node_specific, gpus)
        self._filter_cache: dict[tuple, str | None] = {}
        self._classes: list[NodeClass] = []
        self._class_of: dict[str, NodeClass] = {}
        self._free: dict[str, int] = {}  # node -> free GPUs as bucketed
        self._cap: dict[str, int] = {}  # node -> pods capacity
        self._node_count = 0
        self._nodes_dirty = True
        self._capacity_freed = True
        self._last_full = 0.0
        self._last_free_total = -1
        self.moves = 0  # changes to the free-GPU buckets (a fit computed earlier is stale once this grows)
        self.retry_seconds = state.config.timing.scheduler_retry_seconds
        self.wordings = wordings_for(state.mode, state.behaviours)  # scheduler name -> how it speaks
        self.opaque = not state.reactors.reasons_shown
        self.release = StaggeredRelease(state.behaviour_seed) if state.behaves(Behaviour.RELEASE_STAGGERED) \
            else None
        for pod in self.store.list("pods"):
            self._track_pod("ADDED", pod)
        self.store.add_listener(self._on_change)

    # -- indexes kept from store changes ---------------------------------------------------------
    def _on_change(self, change: Change) -> None:
        if change.resource == "pods":
            self._track_pod(change.type, change.obj)
        elif change.resource == "nodes":
            self._nodes_dirty = True

    def _track_pod(self, type_: str, pod: dict) -> None:
        meta, spec, status = pod["metadata"], pod.get("spec", {}), pod.get("status", {})
        key = (meta.get("namespace", ""), meta["name"])
        deleted = type_ == "DELETED"
        node = spec.get("nodeName")
        ours = spec.get("schedulerName", S.DEFAULT_SCHEDULER) in self.wordings
        schedulable = (not deleted and not node and status.get("phase", "Pending") == "Pending"
                       and not meta.get("deletionTimestamp") and ours)
        pending = schedulable and not spec.get("schedulingGates")
        if self.release is not None and self.release.hold(
                key, schedulable and bool(spec.get("schedulingGates")), pending):
            pending = False  # its gate was lifted: it reaches the queue after its staggered delay
        if pending:
            if key not in self._pending:
                self._pending[key] = S.queue_key(pod, next(self._seq), not self.state.reactors.priority_queue)
                self._new.add(key)
        elif key in self._pending:
            del self._pending[key]
            self._new.discard(key)
            self._reports.pop(key, None)
            self._shown.pop(key, None)
        if deleted or meta.get("deletionTimestamp"):
            if self._nominated.pop(key, None) is not None:
                self._capacity_freed = True  # its reservation is gone
        if deleted:
            self._pod_info.pop(meta.get("uid", ""), None)
            self._victims.discard(key)
        active_node = node if node and not deleted and status.get("phase") not in TERMINAL else None
        old = self._node_of.get(key)
        if old != active_node:
            if old is not None:
                self._node_pods[old].discard(key)
                self._prio_count[self._prio_of.pop(key)] -= 1
                del self._node_of[key]
                self._capacity_freed = True
            if active_node is not None:
                self._node_of[key] = active_node
                self._node_pods[active_node].add(key)
                prio = S.priority_of(pod)
                self._prio_of[key] = prio
                self._prio_count[prio] += 1
                self._nominated.pop(key, None)

    def _rebuild_nodes(self) -> None:
        inv = self.state.inventory
        groups: dict[tuple, list[dict]] = defaultdict(list)
        for node in self.store.list("nodes"):
            labels = dict(node["metadata"].get("labels") or {})
            labels.pop(S.HOSTNAME_LABEL, None)
            sig = (tuple(sorted(labels.items())), repr(S.effective_taints(node)),
                   bool(node.get("spec", {}).get("unschedulable")))
            groups[sig].append(node)
        self._classes, self._class_of, self._free, self._cap = [], {}, {}, {}
        for nodes in groups.values():
            size = max(len(inv.gpus.get(n["metadata"]["name"], [])) for n in nodes)
            cls = NodeClass(nodes[0], size)
            for n in nodes:
                name = n["metadata"]["name"]
                alloc = n.get("status", {}).get("allocatable") or {}
                self._cap[name] = int(str(alloc.get("pods", "110")))
                cls.nodes.append(name)
                self._class_of[name] = cls
                free = min(inv.free_count(name), size)
                self._free[name] = free
                cls.buckets[free].add(name)
            self._classes.append(cls)
        self._node_count = len(self._class_of)
        self._filter_cache.clear()
        self._nodes_dirty = False
        self._capacity_freed = True

    def _sync_free(self) -> int:
        """Bring the buckets in line with the inventory; returns the total of free GPUs."""
        inv, total = self.state.inventory, 0
        for name, old in self._free.items():
            free = inv.free_count(name)
            total += free
            if free != old:
                self._move(name, free)
        return total

    def _move(self, name: str, free: int) -> None:
        self.moves += 1
        cls = self._class_of[name]
        free = max(0, min(free, len(cls.buckets) - 1))
        cls.buckets[self._free[name]].discard(name)
        cls.buckets[free].add(name)
        self._free[name] = free

    # -- the pass ----------------------------------------------------------------------------------
    def run_pass(self) -> int:
        if self._nodes_dirty:
            self._rebuild_nodes()
        if self.release is not None:
            for key in self.release.due():
                pod = self.store.get("pods", key[0], key[1])
                if pod is not None:
                    self._track_pod("MODIFIED", pod)
        if not self._pending:
            self._last_free_total = -1
            return 0
        now = time.monotonic()
        total_free = self._sync_free()
        full = (self._capacity_freed or total_free != self._last_free_total
                or now - self._last_full >= self.retry_seconds)
        if not full and not self._new:
            return 0
        keys = list(self._pending) if full else list(self._new)
        keys.sort(key=self._pending.__getitem__)
        if full:
            self._last_full = now
        self._capacity_freed = False
        self._new.clear()
        bound, failed_memo = 0, {}
        for key in keys:
            pod = self.store.get("pods", key[0], key[1])
            if pod is None or key not in self._pending:
                continue
            if self._attempt(key, pod, failed_memo, now):
                bound += 1
        self._last_free_total = sum(self._free.values())
        return bound

    def _info(self, pod: dict) -> tuple:
        uid = pod["metadata"].get("uid", "")
        info = self._pod_info.get(uid)
        if info is None:
            spec = pod.get("spec", {})
            sig = (repr(sorted((spec.get("nodeSelector") or {}).items())), repr(spec.get("affinity")),
                   repr(spec.get("tolerations")))
            info = (sig, S.is_node_specific(spec), S.gpu_request(pod))
            self._pod_info[uid] = info
        return info

    def _attempt(self, key: Key, pod: dict, memo: dict, now: float) -> bool:
        sig, specific, need = self._info(pod)
        prio = S.priority_of(pod)
        nominated = pod.get("status", {}).get("nominatedNodeName")
        # pods with a nomination see their own reservation, node-specific pods their own nodes: no sharing
        memo_key = None if specific or nominated or key in self._nominated else (sig, need, prio)
        if memo_key is None or memo_key not in memo:
            node = self._find_node(pod, key, sig, specific, need, prio, nominated)
            if node is not None:
                self._bind(key, pod, node)
                return True
            reasons = self._reasons(pod, key, sig, specific, need, prio)
            if memo_key is not None:
                memo[memo_key] = reasons
        else:
            reasons = memo[memo_key]
        self._fail(key, pod, need, prio, reasons, now)
        return False

    # -- feasibility -------------------------------------------------------------------------------
    def _static(self, sig: tuple, pod: dict, cls: NodeClass, node_name: str | None) -> str | None:
        ck = (sig, id(cls), node_name)
        if ck not in self._filter_cache:
            node = cls.rep if node_name is None else self.store.get("nodes", None, node_name)
            self._filter_cache[ck] = S.static_filter(node, pod.get("spec", {})) if node else S.REASON_AFFINITY
        return self._filter_cache[ck]

    def _reserved(self, node: str, prio: int, key: Key) -> int:
        """GPUs held back on ``node`` for nominated preemptors of at least ``prio``."""
        return sum(g for k, (n, p, g) in self._nominated.items() if n == node and p >= prio and k != key)

    def _fits(self, node: str, need: int, prio: int, key: Key, nominated_nodes: set[str]) -> bool:
        if len(self._node_pods.get(node, ())) >= self._cap.get(node, 110):
            return False
        free = self._free[node]
        if node in nominated_nodes:
            free -= self._reserved(node, prio, key)
        return free >= need

    def _find_node(self, pod: dict, key: Key, sig: tuple, specific: bool, need: int, prio: int,
                   nominated: str | None) -> str | None:
        nominated_nodes = {n for n, _, _ in self._nominated.values()}
        if nominated and nominated in self._class_of:
            cls = self._class_of[nominated]
            if (self._static(sig, pod, cls, nominated if specific else None) is None
                    and self._fits(nominated, need, prio, key, nominated_nodes)):
                return nominated
        best: tuple[int, str] | None = None
        for cls in self._classes:
            if specific:
                for name in cls.nodes:
                    if (self._static(sig, pod, cls, name) is None and self._fits(name, need, prio, key, nominated_nodes)
                            and (best is None or (self._free[name], name) < best)):
                        best = (self._free[name], name)
                continue
            if self._static(sig, pod, cls, None) is not None:
                continue
            for free in range(need, len(cls.buckets)):
                if best is not None and free > best[0]:
                    break
                bucket = cls.buckets[free]
                name = bucket.smallest()
                if name is None:
                    continue
                if not self._fits(name, need, prio, key, nominated_nodes):
                    name = next((n for n in sorted(bucket.names)
                                 if self._fits(n, need, prio, key, nominated_nodes)), None)
                if name is not None:
                    if best is None or (free, name) < best:
                        best = (free, name)
                    break
        return best[1] if best else None

    def _node_reasons(self, name: str, need: int, prio: int, key: Key, nominated_nodes: set[str]) -> list[str]:
        out = []
        if len(self._node_pods.get(name, ())) >= self._cap.get(name, 110):
            out.append(S.REASON_TOO_MANY_PODS)
        free = self._free[name] - (self._reserved(name, prio, key) if name in nominated_nodes else 0)
        if free < need:
            out.append(S.REASON_INSUFFICIENT_GPU)
        return out

    def _reasons(self, pod: dict, key: Key, sig: tuple, specific: bool, need: int, prio: int) -> Failure:
        """Why each node failed, as kube-scheduler's filters say it."""
        nominated_nodes = {n for n, _, _ in self._nominated.values()}
        failure = Failure()
        for cls in self._classes:
            if not specific:
                reason = self._static(sig, pod, cls, None)
                if reason is not None:
                    failure.unresolvable[reason] += len(cls.nodes)
                    continue
            for name in cls.nodes:
                if specific:
                    reason = self._static(sig, pod, cls, name)
                    if reason is not None:
                        failure.unresolvable[reason] += 1
                        continue
                total = len(self.state.inventory.gpus.get(name, ()))
                for r in self._node_reasons(name, need, prio, key, nominated_nodes):
                    if r == S.REASON_INSUFFICIENT_GPU and need > total:
                        failure.unresolvable[r] += 1  # more than the node has at all: no preemption helps
                    else:
                        failure.resolvable.setdefault(r, []).append(name)
        return failure

    # -- outcomes ----------------------------------------------------------------------------------
    def wording_of(self, pod: dict) -> Wording:
        return self.wordings.get(pod.get("spec", {}).get("schedulerName", S.DEFAULT_SCHEDULER), KUBE_WORDING)

    def _bind(self, key: Key, pod: dict, node: str, wording: Wording | None = None) -> None:
        wording = wording or self.wording_of(pod)
        inv = self.state.inventory
        for container, n in S.container_gpus(pod):
            inv.allocate(node, key, container, n)
        self._move(node, inv.free_count(node))
        pod["spec"]["nodeName"] = node
        set_condition(pod, "PodScheduled", "True")
        self._nominated.pop(key, None)
        self.store.update("pods", pod)
        self.state.events.record(pod, "Scheduled", wording.scheduled(key[0], key[1], node), NORMAL,
                                 component=wording.component)
        actors.audit_binding(self.state, BINDERS.get(wording.dialect, actors.KUBE_SCHEDULER), pod, node)

    def _fail(self, key: Key, pod: dict, need: int, prio: int, reasons: Failure, now: float) -> None:
        post, nominated = self._preempt(key, pod, need, prio, reasons)
        wording = self.wording_of(pod)
        message = reasons.messages.get((post, wording.dialect))
        if message is None:
            if self.opaque:
                message = self.state.reactors.opaque_fit_error(self._node_count)
            else:
                message = wording.unschedulable(self._node_count, reasons.counts(), post)
            reasons.messages[(post, wording.dialect)] = message
        if self._shown.get(key) != message or nominated:
            self._shown[key] = message
            set_condition(pod, "PodScheduled", "False", "Unschedulable", message)
            self.store.update("pods", pod)
        last = self._reports.get(key)
        if last is None or now - last[0] >= self.retry_seconds:
            self._reports[key] = (now, message)
            self.state.events.record(pod, wording.failed_reason, message, WARNING, component=wording.component)
