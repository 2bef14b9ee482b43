"""Every attempt of every wave item, and each attempt's outcome.

A wave item may run more than once: the platform preempts or evicts it and a user's retry (an Airflow retry,
a Job controller) or the platform itself (Kueue's requeue) submits it again, under a new pod name. The
attempts of an item are the pods carrying its item annotation, in creation order, whether they still exist
(the final pod list), were only seen by the observer (last seen state), or were only recorded by the
operator when it submitted them (a pod created and gone between two snapshots, or refused at admission).

One attempt has one outcome everywhere: the wave task, the observer and the evidence each call
``classify_attempt`` on the same records (the pod now or as last seen, its events, its owners' conditions,
the audit log's deletes), and whether another attempt follows is ``next_attempt`` of that outcome. The task
records its ``TaskDecision`` in the run's evidence, where the observer and the evidence read it back.
Pure functions: the callers read the cluster, the observer's files and the audit log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum

from gpupoc.common.outcomes import WorkloadOutcome
from gpupoc.common.timefmt import parse_time, rfc3339
from gpupoc.pipeline.wave import item_key as item_of
from gpupoc.pipeline.workload_outcome import (
    Deletion,
    OutcomeRecord,
    Rejection,
    Statement,
    classify,
    event_statements,
    group_event_statements,
    named_pod,
)


@dataclass(frozen=True)
class Submission:
    """The pipeline's own record of one pod it submitted for a wave item (written by the operator)."""

    item: str
    namespace: str
    pod: str | None
    at: datetime | None
    try_number: int = 1
    rejection: Rejection | None = None

    def to_dict(self) -> dict:
        return {"item": self.item, "namespace": self.namespace, "pod": self.pod,
                "at": rfc3339(self.at) if self.at else None, "try_number": self.try_number,
                "rejection": None if self.rejection is None else {
                    "status": self.rejection.status, "message": self.rejection.message,
                    "at": rfc3339(self.rejection.at) if self.rejection.at else None}}

    @classmethod
    def from_dict(cls, d: dict) -> "Submission":
        rej = d.get("rejection")
        return cls(d["item"], d["namespace"], d.get("pod"), parse_time(d.get("at")), int(d.get("try_number") or 1),
                   Rejection(int(rej["status"]), rej.get("message") or "", parse_time(rej.get("at"))) if rej else None)


@dataclass
class Attempt:
    """One pod (or refused creation) of a wave item, with its outcome."""

    item: str
    number: int
    namespace: str
    pod_name: str | None
    pod: dict | None            # the pod now, else as last seen, else None
    present: bool
    submitted_by: str           # pipeline | platform
    outcome: OutcomeRecord
    final: bool = False         # the item's last attempt
    requeued_by_platform: bool | None = None  # for a preempted/evicted attempt: did the platform resubmit it
    created_at: datetime | None = None


@dataclass
class Evidence:
    """What the platform recorded, keyed by (namespace, pod name)."""

    events: list[dict] = field(default_factory=list)
    owner: dict[tuple[str, str], list[Statement]] = field(default_factory=dict)
    deletions: dict[tuple[str, str], list[Deletion]] = field(default_factory=dict)
    uids: dict[str, str] = field(default_factory=dict)  # pod or owner uid -> "ns/name"
    _about: dict | None = field(default=None, repr=False, compare=False)  # (ns, pod) -> (its events, its groups')

    def about(self, namespace: str, pod: str) -> tuple[list[dict], list[dict]]:
        """The events about the pod, and the pod group events that name it, from an index built once: a wave
        of 10,000 pods is not a scan of every event per pod."""
        if self._about is None:
            self._about = {}
            for e in self.events:
                inv = e.get("involvedObject") or e.get("regarding") or {}
                key = (inv.get("namespace") or (e.get("metadata") or {}).get("namespace"), inv.get("name"))
                self._about.setdefault(key, ([], []))[0].append(e)
                named = named_pod(e)
                if named is not None:
                    self._about.setdefault(named, ([], []))[1].append(e)
        return self._about.get((namespace, pod), ([], []))


def classify_attempt(key: tuple[str, str], pod: dict | None, present: bool, evidence: Evidence,
                     rejection: Rejection | None = None, uids: dict[str, str] | None = None) -> OutcomeRecord:
    """The outcome of the attempt ``key`` (namespace, pod) from every record the pipeline reads: ``pod`` now
    (``present``) or as last seen, the events about it, its owners' conditions (or the pod group events that
    name it), the audit log's deletes of it, the admission answer. The wave task, the observer and the
    evidence all decide with this."""
    own, groups = evidence.about(*key)
    owner = evidence.owner.get(key) or group_event_statements(groups, *key)
    return classify(pod, present=present, events=event_statements(own, *key), owner=owner,
                    deletions=evidence.deletions.get(key, []), rejection=rejection,
                    uids=evidence.uids if uids is None else uids)


class NextAttempt(str, Enum):
    """What follows an attempt that ended."""

    RESUBMIT = "resubmit"   # the task's retry submits the item again
    PLATFORM = "platform"   # the platform requeues it itself (the plan's resubmission.platform_requeues)
    NONE = "none"           # no further attempt: the item's outcome is final


def next_attempt(outcome: WorkloadOutcome, try_number: int, limit: int, platform_requeues: bool) -> NextAttempt:
    """Another attempt follows a preempted or evicted one while the plan's ``resubmission.limit`` allows it
    (``try_number`` counts from 1, as Airflow's tries)."""
    if not outcome.resubmittable or (not platform_requeues and try_number > limit):
        return NextAttempt.NONE
    return NextAttempt.PLATFORM if platform_requeues else NextAttempt.RESUBMIT


@dataclass(frozen=True)
class TaskDecision:
    """How one try of a wave task ended (its attempt's outcome) and what follows, as the task recorded it."""

    item: str
    namespace: str
    pod: str | None
    try_number: int
    outcome: WorkloadOutcome
    evidence: str               # ``OutcomeRecord.evidence()``: who, when, which record says so
    next: NextAttempt
    at: datetime | None = None

    def to_dict(self) -> dict:
        return {"item": self.item, "namespace": self.namespace, "pod": self.pod, "try_number": self.try_number,
                "outcome": self.outcome.value, "evidence": self.evidence, "next": self.next.value,
                "at": rfc3339(self.at) if self.at else None}

    @classmethod
    def from_dict(cls, d: dict) -> "TaskDecision":
        return cls(d["item"], d["namespace"], d.get("pod"), int(d.get("try_number") or 1),
                   WorkloadOutcome(d["outcome"]), d.get("evidence") or "", NextAttempt(d.get("next") or "none"),
                   parse_time(d.get("at")))


def _created(pod: dict | None, sub: Submission | None) -> datetime | None:
    return parse_time(((pod or {}).get("metadata") or {}).get("creationTimestamp")) or (sub.at if sub else None)


def _by(pod: dict | None, submitted: bool) -> str:
    if submitted:
        return "pipeline"
    refs = ((pod or {}).get("metadata") or {}).get("ownerReferences") or []
    return "platform" if any(r.get("controller") for r in refs) or refs else "pipeline"


def pod_uids(pods) -> dict[str, str]:
    """uid -> ``ns/name`` of every pod given (to name who preempted whom)."""
    out = {}
    for p in pods:
        m = p.get("metadata") or {}
        if m.get("uid"):
            out[m["uid"]] = f"{m.get('namespace')}/{m.get('name')}"
    return out


def gather(items: dict[str, str], present: list[dict], last_seen: dict[tuple[str, str], dict],
           submissions: list[Submission], evidence: Evidence, also: dict[str, str] | None = None) -> list[Attempt]:
    """Every attempt of every item (``items``: item key -> namespace), oldest first per item.

    An item with no attempt at all is one LOST attempt (nothing of it was seen or recorded). ``also`` names
    items the class's probes submit (an artifact's consumer, an over-quota request): their pods are read back
    the same way, but one that was never created is not lost (a refused over-quota request never exists)."""
    optional = {k: v for k, v in (also or {}).items() if k not in items}
    items = {**items, **optional}
    now = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in present}
    pods = {**last_seen, **now}
    subs = {(s.namespace, s.pod): s for s in submissions if s.pod}
    uids = {**pod_uids(pods.values()), **evidence.uids}
    by_item: dict[str, list[Attempt]] = {k: [] for k in items}
    for key, pod in pods.items():
        item = item_of(pod)
        if item not in by_item:
            continue
        sub = subs.get(key)
        out = classify_attempt(key, pod, key in now, evidence, uids=uids)
        a = Attempt(item, 0, key[0], key[1], pod, key in now, _by(pod, sub is not None), out,
                    created_at=_created(pod, sub))
        by_item[item].append(a)
    for s in submissions:
        if s.item not in by_item or (s.namespace, s.pod) in pods:
            continue
        if s.rejection is None and s.pod is None:
            continue
        key = (s.namespace, s.pod or "")
        out = classify_attempt(key, None, False, evidence, rejection=s.rejection, uids=uids)
        if out.outcome is WorkloadOutcome.LOST:
            out = OutcomeRecord(WorkloadOutcome.LOST, s.at, None, None,
                                "submitted by the pipeline, never seen on the platform; no event, condition or audit "
                                "record says why", "none")
        by_item[s.item].append(Attempt(s.item, 0, s.namespace, s.pod, None, False, "pipeline", out, created_at=s.at))
    result = []
    for item, found in by_item.items():
        if not found and item in optional:
            continue
        if not found:
            out = OutcomeRecord(WorkloadOutcome.LOST, None, None, None,
                                "no pod of this item was seen on the platform nor recorded as submitted; see the "
                                "wave task's log", "none")
            found = [Attempt(item, 0, items[item], None, None, False, "pipeline", out)]
        attempts = sorted(found, key=_order)
        for i, a in enumerate(attempts, 1):
            a.number = i
            if a.outcome.outcome.resubmittable:
                nxt = attempts[i] if i < len(attempts) else None
                a.requeued_by_platform = bool(nxt and nxt.submitted_by == "platform")
        attempts[-1].final = True
        result += attempts
    return result


def _order(a: Attempt) -> tuple:
    return (a.created_at is None, a.created_at.timestamp() if a.created_at else 0.0, a.pod_name or "")
