"""Who preempted each victim, from what the platform recorded, and whether it outranked its victim (QC-13).

The platform names a preemptor in its own words (``workload_outcome.preemptor``): a pod ``ns/name``, KAI's
pod group ``pg-<pod>-<uid>``, or a uid alone: a real kube-scheduler's only form ("Preempted by pod <uid> on
node <node>", beside a ``DisruptionTarget`` condition that names nobody) and Kueue's Workload uid. A uid is
resolved against every pod the pipeline knows (``Facts``): the wave's attempts, the services' replicas the
observer saw, the objects owning them (a Kueue Workload) and the audit log's bindings (a ``pods/binding``
create, whose ``objectRef.uid`` is the bound pod's).

Where no statement names a preemptor (Volcano's "Pod is evicted, because of preempt"), the audit log may: the
scheduler's user deleted the victim, and the first pod that same user bound to the victim's node after that
delete, within ``BIND_WITHIN_SECONDS``, is the pod the node was freed for.

Nothing else is inferred: a preemption no record names, or whose preemptor is a pod of unknown priority, is
``UNRESOLVED``, and QC-13 is not verified for it, never passed nor failed. Under a queue scheduler a preemptor
of another queue (a reclaim, a fair share) is ``OTHER_QUEUE``: queue policy, judged by the reclaim and
fair-share checks, not by priority (``common/priority.py``). So is a preemption whose record says so in the
platform's words (Kueue's cohort reasons), even when the preemptor's Workload is gone.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Callable, Iterable

from gpupoc.pipeline.workload_outcome import Deletion, Statement, preemptor

# The scheduler binds the pod it freed a node for once the victim is gone: after its grace period (30 s by
# default) and a scheduling pass.
BIND_WITHIN_SECONDS = 120.0
_PREEMPT_WORDS = re.compile(r"preempt", re.I)
_NOT_A_PREEMPTION = {"FailedScheduling", "Scheduled", "Unschedulable", "Nominated", "PodGroupNotReady"}
# Kueue's preemption reasons across ClusterQueues (``InCohortReclamation``, ``InCohortFairSharing``,
# ``InCohortReclaimWhileBorrowing``: "... due to reclamation within the cohort", "... Fair Sharing within the
# cohort"); a preemption inside the ClusterQueue is ``InClusterQueue``, "prioritization in the ClusterQueue".
_ACROSS_QUEUES = re.compile(r"\bInCohort|within the cohort", re.I)


class Judgement(str, Enum):
    """How QC-13 stands on one preemption."""

    JUDGED = "judged"            # the preemptor is known with its priority, in the victim's queue
    UNRESOLVED = "unresolved"    # no record names a pod of known priority: not verified
    OTHER_QUEUE = "other queue"  # another queue's reclaim or fair share: queue policy, not priority


@dataclass(frozen=True)
class Binding:
    """A bind of a pod to a node, as the audit log recorded it (``pods/binding`` create)."""

    namespace: str
    name: str
    uid: str | None
    username: str
    at: datetime | None = None
    node: str | None = None  # the Binding's target, when the audit level keeps the request

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class KnownPod:
    """A pod the pipeline knows: its priority and node."""

    key: str                 # ns/name
    priority: int | None
    node: str | None = None
    uid: str | None = None

    @property
    def namespace(self) -> str:
        return self.key.split("/", 1)[0]


def known_pod(pod: dict) -> KnownPod:
    """A pod object as a ``KnownPod``."""
    m, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    prio = spec.get("priority")
    return KnownPod(f"{m.get('namespace')}/{m.get('name')}", int(prio) if prio is not None else None,
                    spec.get("nodeName"), m.get("uid"))


@dataclass
class Facts:
    """What names and ranks preemptors: known pods, uids, the audit log's bindings and deletes, the queues."""

    pods: dict[str, KnownPod | None] = field(default_factory=dict)  # ns/name -> pod (None: looked up, not found)
    uids: dict[str, str] = field(default_factory=dict)              # pod or owner uid -> ns/name
    bindings: list[Binding] = field(default_factory=list)
    deletions: dict[tuple[str, str], list[Deletion]] = field(default_factory=dict)
    queues: dict[str, str] = field(default_factory=dict)            # namespace -> the queue priorities share
    lookup: Callable[[str], KnownPod | None] | None = None          # a pod known to no record (read it now)
    _on_node: dict | None = field(default=None, repr=False, compare=False)

    def add(self, pod: KnownPod, first: bool = False) -> None:
        """Know ``pod`` (``first``: it replaces what another source said of it)."""
        if first or self.pods.get(pod.key) is None:
            self.pods[pod.key] = pod
        if pod.uid:
            self.uids.setdefault(pod.uid, pod.key)

    def pod(self, key: str) -> KnownPod | None:
        """The pod ``ns/name``: known, else looked up once."""
        if key in self.pods or self.lookup is None or "/" not in key:
            return self.pods.get(key)
        self.pods[key] = self.lookup(key)
        return self.pods[key]

    def bound_on(self, node: str) -> tuple[list[float], list[Binding]]:
        """The bindings to ``node`` (times, bindings) oldest first, from an index built once."""
        if self._on_node is None:
            self._on_node = {}
            for b in self.bindings:
                where = b.node or getattr(self.pods.get(b.key), "node", None)
                if where and b.at is not None:
                    self._on_node.setdefault(where, []).append(b)
            for k, bs in self._on_node.items():
                bs.sort(key=lambda b: b.at)
                self._on_node[k] = ([b.at.timestamp() for b in bs], bs)
        return self._on_node.get(node, ([], []))

    def with_bindings(self) -> "Facts":
        """The bindings' uids known too (a uid the platform named is then found by its binding)."""
        for b in self.bindings:
            if b.uid:
                self.uids.setdefault(b.uid, b.key)
        return self


@dataclass(frozen=True)
class Preemption:
    """One preemption as QC-13 judges it."""

    judgement: Judgement
    preemptor: str | None = None   # ns/name when resolved, else what the platform named (if anything)
    priority: int | None = None
    named_by: str | None = None    # the record that named the preemptor, or why none did
    by_higher: bool | None = None


def named(victim: dict, said: Iterable[Statement], uids: dict[str, str]) -> list[tuple[str, str]]:
    """(name, record) of every preemptor the platform's statements name for ``victim`` (a ``workload_runs``
    row): its outcome's own, then its events' and its pod groups' that speak of a preemption."""
    out = []
    by = victim.get("outcome_by")
    if by and ("/" in by or by.startswith("uid ")):
        out.append((by, f"{victim.get('outcome_source') or 'record'} {victim.get('outcome_reason') or ''}".strip()))
    for s in said:
        if s.reason in _NOT_A_PREEMPTION or not _PREEMPT_WORDS.search(s.text):
            continue
        name = preemptor(s.message, uids)
        if name:
            out.append((name, f"{s.source} {s.reason or ''}".strip()))
    return out


def _resolve(name: str, facts: Facts) -> KnownPod | None:
    key = facts.uids.get(name[4:]) if name.startswith("uid ") else name
    known = facts.pod(key) if key else None
    return known if known is not None and known.priority is not None else None


def bound_after_delete(victim: dict, facts: Facts) -> tuple[str, str] | None:
    """(pod, record) the scheduler bound to the victim's node first after it deleted the victim, by the same
    user, within ``BIND_WITHIN_SECONDS``; None when the audit log holds no such pair."""
    key, node = (victim.get("namespace"), victim.get("pod")), victim.get("node")
    if not node:
        return None
    times, bindings = facts.bound_on(node)
    for d in sorted((d for d in facts.deletions.get(key, []) if d.at is not None), key=lambda d: d.at):
        start = d.at.timestamp()
        for i in range(bisect.bisect_left(times, start), len(times)):
            b = bindings[i]
            if times[i] - start > BIND_WITHIN_SECONDS:
                break
            if b.username == d.username and b.key != f"{key[0]}/{key[1]}":
                return b.key, (f"audit log: {d.username} deleted the victim at {d.at.isoformat()} and bound "
                               f"{b.key} to {node} at {b.at.isoformat()}")
    return None


def judge(victim: dict, said: Iterable[Statement], facts: Facts, within_queue: bool) -> Preemption:
    """QC-13 on one preempted ``victim`` (a ``workload_runs`` row: namespace, pod, priority, node, outcome_*)."""
    names = named(victim, said, facts.uids)
    found = next(((known, record) for name, record in names if (known := _resolve(name, facts)) is not None), None)
    if found is None and not names:
        pair = bound_after_delete(victim, facts)
        if pair is not None:
            known = _resolve(pair[0], facts)
            found = (known, pair[1]) if known is not None else None
            names = [pair]
    across = _across_queues(victim, said) if within_queue else None
    if found is None and across is not None:  # the platform says it was another queue's: queue policy
        return Preemption(Judgement.OTHER_QUEUE, names[0][0] if names else None, None, across)
    if found is None:
        why = (f"{names[0][1]} names {names[0][0]}, a pod of no known priority" if names else
               "no event, condition, pod group event or audit record names the preemptor")
        return Preemption(Judgement.UNRESOLVED, names[0][0] if names else None, None, why)
    known, record = found
    mine = victim.get("priority")
    if within_queue and _queue(facts, victim.get("namespace")) != _queue(facts, known.namespace):
        return Preemption(Judgement.OTHER_QUEUE, known.key, known.priority, record)
    if mine is None:
        return Preemption(Judgement.UNRESOLVED, known.key, known.priority, f"{record}; the victim's priority is unknown")
    return Preemption(Judgement.JUDGED, known.key, known.priority, record, known.priority > mine)


def _across_queues(victim: dict, said: Iterable[Statement]) -> str | None:
    """The record that says the preemption came from another queue (Kueue's cohort reasons), if any."""
    texts = [(f"{victim.get('outcome_source') or 'record'} {victim.get('outcome_reason') or ''}".strip(),
              f"{victim.get('outcome_reason') or ''} {victim.get('outcome_message') or ''}")]
    texts += [(f"{s.source} {s.reason or ''}".strip(), s.text) for s in said]
    return next((f"{record}: {text.strip()}" for record, text in texts if _ACROSS_QUEUES.search(text)), None)


def _queue(facts: Facts, namespace: str | None) -> str | None:
    return facts.queues.get(namespace or "", namespace)
