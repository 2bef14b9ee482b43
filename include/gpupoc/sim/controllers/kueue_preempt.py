"""Which admitted Workloads Kueue preempts to admit a pending one, by the ClusterQueue's preemption policy.

Candidates (``findCandidates``): with ``withinClusterQueue`` LowerPriority (or LowerOrNewerEqualPriority) the
ClusterQueue's own lower-priority (or equal and newer) Workloads, reason ``InClusterQueue``; in a cohort,
Workloads of the *other* ClusterQueues that are borrowing:
- classical: when the preemptor would stay within its nominal quota, ``reclaimWithinCohort`` (Any, or
  LowerPriority) gives reason ``InCohortReclamation``; when it would borrow, ``borrowWithinCohort``
  LowerPriority takes lower-priority Workloads up to ``maxPriorityThreshold``, reason
  ``InCohortReclaimWhileBorrowing``;
- fair sharing: with ``reclaimWithinCohort`` not Never, Workloads of ClusterQueues whose share would stay
  at or above the preemptor's (``LessThanOrEqualToFinalShare``, then ``LessThanInitialShare``), reason
  ``InCohortFairSharing``.
Targets are taken in order (other ClusterQueues first, lowest priority, most recently admitted), skipping a
ClusterQueue once it no longer borrows, until the preemptor fits; then the ones not needed are put back
(``classicalPreemptions``/``fairPreemptions``). ``borrow-not-reclaimed`` removes the cohort candidates of a preemptor that
would stay within its nominal quota (a lender taking its quota back); ``fairshare-ignored`` turns
fair-sharing preemption into the classical one.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpupoc.sim.controllers.kueue_evict import (IN_CLUSTER_QUEUE, IN_COHORT_FAIR_SHARING, IN_COHORT_RECLAIM_WHILE_BORROWING,
                                                IN_COHORT_RECLAMATION)
from gpupoc.sim.controllers.kueue_quota import QueueQuota, QuotaTree
from gpupoc.sim.controllers.kueue_types import Entry


@dataclass(frozen=True)
class Policy:
    """``ClusterQueue.spec.preemption``."""

    within_cluster_queue: str = "Never"
    reclaim_within_cohort: str = "Never"
    borrow_within_cohort: str = "Never"
    max_priority_threshold: int | None = None

    @classmethod
    def of(cls, spec: dict) -> "Policy":
        p = spec.get("preemption") or {}
        borrow = p.get("borrowWithinCohort") or {}
        return cls(p.get("withinClusterQueue", "Never"), p.get("reclaimWithinCohort", "Never"),
                   borrow.get("policy", "Never"), borrow.get("maxPriorityThreshold"))


@dataclass
class Target:
    entry: Entry
    cq: str
    reason: str


def _satisfies(policy: str, preemptor: Entry, candidate: Entry) -> bool:
    if policy == "Any":
        return True
    if policy == "LowerPriority":
        return candidate.priority < preemptor.priority
    if policy == "LowerOrNewerEqualPriority":
        return candidate.priority < preemptor.priority or (
            candidate.priority == preemptor.priority and (candidate.created, candidate.seq) > (preemptor.created,
                                                                                              preemptor.seq))
    return False


def candidates(e: Entry, cq: QueueQuota, policy: Policy, tree: QuotaTree, admitted: dict[str, list[Entry]],
               fair_sharing: bool, cohort_reclaim: bool) -> list[Target]:
    out = [Target(a, cq.name, IN_CLUSTER_QUEUE) for a in admitted.get(cq.name, [])
           if _satisfies(policy.within_cluster_queue, e, a)]
    would_borrow = tree.borrowing(cq, e.gpus)
    if cq.cohort is None or not (cohort_reclaim or would_borrow):
        return out
    for other in tree.members(cq):
        if other.name == cq.name or not tree.borrowing(other):
            continue
        for a in admitted.get(other.name, []):
            if fair_sharing:
                if policy.reclaim_within_cohort != "Never" and _satisfies(policy.reclaim_within_cohort, e, a):
                    out.append(Target(a, other.name, IN_COHORT_FAIR_SHARING))
            elif not would_borrow:
                if _satisfies(policy.reclaim_within_cohort, e, a):
                    out.append(Target(a, other.name, IN_COHORT_RECLAMATION))
            elif policy.borrow_within_cohort == "LowerPriority" and a.priority < e.priority and (
                    policy.max_priority_threshold is None or a.priority <= policy.max_priority_threshold):
                out.append(Target(a, other.name, IN_COHORT_RECLAIM_WHILE_BORROWING))
    return out


def _order(t: Target, own: str) -> tuple:
    return (t.cq == own, t.entry.priority, -t.entry.admitted_at, -t.entry.seq)


def targets(e: Entry, cq: QueueQuota, tree: QuotaTree, found: list[Target], fair_sharing: bool) -> list[Target]:
    """The smallest set of ``found`` whose eviction lets ``e`` fit (empty when none does)."""
    if fair_sharing:
        return _fair(e, cq, tree, found)
    allow_borrow = tree.borrowing(cq, e.gpus)
    chosen: list[Target] = []
    for t in sorted(found, key=lambda t: _order(t, cq.name)):
        owner = tree.queues[t.cq]
        if t.cq != cq.name and not tree.borrowing(owner):
            continue  # reclaim only from a ClusterQueue that still borrows
        owner.usage -= t.entry.gpus
        chosen.append(t)
        if _fits(e, cq, tree, allow_borrow):
            return _fill_back(e, cq, tree, chosen, allow_borrow)
    _restore(tree, chosen)
    return []


def _fair(e: Entry, cq: QueueQuota, tree: QuotaTree, found: list[Target]) -> list[Target]:
    new_share = tree.share(cq, e.gpus)
    for final in (True, False):  # LessThanOrEqualToFinalShare, then LessThanInitialShare
        chosen: list[Target] = []
        pool = sorted(found, key=lambda t: (-tree.share(tree.queues[t.cq]), _order(t, cq.name)))
        for t in pool:
            owner = tree.queues[t.cq]
            if t.cq != cq.name:
                before = tree.share(owner)
                after = tree.share(owner, -t.entry.gpus)
                if not (new_share <= after if final else new_share < before):
                    continue
            owner.usage -= t.entry.gpus
            chosen.append(t)
            if _fits(e, cq, tree, True):
                return _fill_back(e, cq, tree, chosen, True)
        _restore(tree, chosen)
    return []


def _fits(e: Entry, cq: QueueQuota, tree: QuotaTree, allow_borrow: bool) -> bool:
    if not allow_borrow and cq.usage + e.gpus > cq.nominal:
        return False
    return e.gpus <= tree.available(cq)


def _fill_back(e: Entry, cq: QueueQuota, tree: QuotaTree, chosen: list[Target], allow_borrow: bool) -> list[Target]:
    """Put back (most recently chosen first, the last one excepted) the targets ``e`` does not need."""
    for t in list(reversed(chosen[:-1])):
        owner = tree.queues[t.cq]
        owner.usage += t.entry.gpus
        if _fits(e, cq, tree, allow_borrow):
            chosen.remove(t)
        else:
            owner.usage -= t.entry.gpus
    _restore(tree, chosen)
    return chosen


def _restore(tree: QuotaTree, chosen: list[Target]) -> None:
    for t in chosen:
        tree.queues[t.cq].usage += t.entry.gpus
