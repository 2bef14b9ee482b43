"""What held a released workload back in one snapshot, as the pipeline reconstructs it from the GPUs held,
the tenants' quotas, the nodes' free GPUs, the queue ahead and the gates (pure functions over typed rows).
Under a scheduler that places gangs whole, a gang's pod asks for every member of its gang not yet placed."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum

from gpupoc.common.constants import PIPELINE_GATE
from gpupoc.common.timefmt import NEVER
from gpupoc.pipeline.timelines import Capacity, Observation, WorkloadTimeline

class Bottleneck(str, Enum):
    """What held a released workload back at one moment, as the pipeline reconstructs it."""

    GATED = "gated"                          # the pipeline's own gate was still on
    QUOTA = "quota_exhausted"                # the tenant's running GPUs + this request exceed its quota
    INSUFFICIENT_GPUS = "insufficient_gpus"  # fewer free GPUs in the pool than requested
    FRAGMENTATION = "fragmentation"          # enough free GPUs in the pool, but on no single node
    BEHIND_QUEUE = "behind_queue"            # it fits, but workloads ahead of it (priority, FIFO) wait
    ADMISSION = "queue_admission"            # it fits, nothing ahead, the platform's own gate still on
    NONE = "none"                            # it fits, nothing ahead: the platform had not acted yet
    UNOBSERVED = "unobserved"                # no snapshot while it waited


# Which message classes name each reconstructed bottleneck correctly.
NAMED_BY: dict[Bottleneck, set[str]] = {
    Bottleneck.GATED: {"gated"},
    Bottleneck.QUOTA: {"quota"},
    Bottleneck.INSUFFICIENT_GPUS: {"insufficient_gpus", "quota", "gang"},  # a queue whose quota is the pool: quota
    Bottleneck.FRAGMENTATION: {"insufficient_gpus", "gang"},
    Bottleneck.BEHIND_QUEUE: {"queue", "quota", "insufficient_gpus", "gang"},
    Bottleneck.ADMISSION: {"queue", "quota"},
    Bottleneck.NONE: set(),
    Bottleneck.UNOBSERVED: set(),
}


def _key(namespace: str, pod: str) -> tuple[str, str]:
    return (namespace, pod)


@dataclass
class Held:
    """One snapshot's accounting: GPUs held per pool, node and tenant, pods placed per gang, the workloads
    pending (released, unbound), and each pool's pending workloads in queue order (filled on first use)."""

    pool: Counter
    node: Counter
    tenant: Counter
    gang_placed: Counter  # (namespace, gang) -> pods of that gang holding GPUs
    pending: list[WorkloadTimeline]
    gangs_whole: bool = True  # the scheduler places a gang as one unit (Kueue, Volcano, KAI)
    ranked: dict[str, tuple[list, list]] | None = None
    slots: dict[tuple[str, int], int | None] = field(default_factory=dict)  # (pool, GPUs) -> pods that fit

    def in_queue_order(self) -> dict[str, tuple[list, list]]:
        """Per pool: the pending workloads' queue ranks and the workloads, in queue order."""
        if self.ranked is None:
            self.ranked = {}
            for w in sorted(self.pending, key=queue_rank):
                keys, ws = self.ranked.setdefault(w.pool, ([], []))
                keys.append(queue_rank(w))
                ws.append(w)
        return self.ranked

    def pods_to_place(self, t: WorkloadTimeline) -> int:
        """How many pods must be placed together for ``t`` to run: its gang's members not yet placed (at
        least itself) under a gang scheduler, else 1 (kube-scheduler places a gang's pods one by one)."""
        if not self.gangs_whole or not t.gang or t.gang_size <= 1:
            return 1
        return max(1, t.gang_size - self.gang_placed[(t.namespace, t.gang)])


def state_at(timelines: list[WorkloadTimeline] | dict, obs: list[Observation], cap: Capacity,
             gangs_whole: bool = True) -> Held:
    """What this snapshot shows held and pending. ``timelines`` may be given as a dict by (namespace, pod)."""
    by_key = timelines if isinstance(timelines, dict) else {_key(t.namespace, t.pod): t for t in timelines}
    held = Held(Counter(), Counter(), Counter(), Counter(), [], gangs_whole)
    for o in obs:
        t = by_key.get(_key(o.namespace, o.pod))
        if t is None:
            continue
        if o.holds_gpus:
            held.pool[cap.node_pool.get(o.node or "", t.pool)] += t.gpus
            held.node[o.node] += t.gpus
            held.tenant[t.tenant] += t.gpus
            if t.gang:
                held.gang_placed[(t.namespace, t.gang)] += 1
        elif not o.node and o.phase == "Pending" and PIPELINE_GATE not in o.gates:  # a gated pod is not queued yet
            held.pending.append(t)
    return held


def queue_rank(w: WorkloadTimeline) -> tuple:
    """A priority queue's order: higher priority first, then earlier ready, then earlier submitted."""
    return (-w.priority, w.ready_at or NEVER, w.submitted_at or NEVER, w.pod)


def bottleneck_at(t: WorkloadTimeline, o: Observation, held: Held,
                  cap: Capacity) -> tuple[Bottleneck, list[WorkloadTimeline], int]:
    """What held ``t`` (seen as ``o``) back in a snapshot whose accounting is ``held`` (``state_at``), the
    workloads ahead of it, and the pool's free GPUs.

    Under a scheduler that places gangs whole (``held.gangs_whole``) a gang's pod asks for its whole gang: the
    GPUs, quota and node slots of every member not yet placed, so a gang of four 1-GPU pods waiting beside
    three free GPUs waits for GPUs, not behind the queue."""
    free = cap.pool_gpus.get(t.pool, 0) - held.pool[t.pool]
    ahead = _ahead_sorted(t, held.in_queue_order())
    if PIPELINE_GATE in o.gates:
        return Bottleneck.GATED, ahead, free
    pods = held.pods_to_place(t)
    need = t.gpus * pods
    quota = cap.tenant_quota.get(t.tenant)
    if quota is not None and held.tenant[t.tenant] + need > quota:
        return Bottleneck.QUOTA, ahead, free
    if free < need:
        return Bottleneck.INSUFFICIENT_GPUS, ahead, free
    if t.gpus > 0 and _node_slots(t, held, cap) < pods:
        return Bottleneck.FRAGMENTATION, ahead, free
    if ahead:
        return Bottleneck.BEHIND_QUEUE, ahead, free
    if o.gates:
        return Bottleneck.ADMISSION, ahead, free
    return Bottleneck.NONE, ahead, free


def _node_slots(t: WorkloadTimeline, held: Held, cap: Capacity) -> int:
    """How many pods of ``t``'s size the free GPUs of its pool's nodes hold (each pod on one node); a pool
    whose nodes are unknown is not judged (counted as room enough). Counted once per snapshot (``held``, whose
    ``cap`` is always the same), pool and size: 1,000 nodes for each of 10,000 waiting pods would not be."""
    key = (t.pool, t.gpus)
    if key not in held.slots:
        nodes = [n for n, p in cap.node_pool.items() if p == t.pool]
        held.slots[key] = sum(max(0, cap.node_gpus.get(n, 0) - held.node[n]) // t.gpus for n in nodes) if nodes \
            else None
    fit = held.slots[key]
    return held.pods_to_place(t) if fit is None else fit


def _ahead_sorted(t: WorkloadTimeline, ranked: dict[str, tuple[list, list]]) -> list[WorkloadTimeline]:
    """Pending workloads of ``t``'s pool a priority queue serves first (higher priority, or same and
    earlier), from the pool's pending workloads in queue order."""
    keys, ws = ranked.get(t.pool, ([], []))
    return ws[:bisect_left(keys, queue_rank(t))]
