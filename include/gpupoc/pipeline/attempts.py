"""Every attempt of every wave item, and each attempt's outcome.

A wave item may run more than once: the platform preempts or evicts it and a user's retry (an Airflow retry,
a Job controller) or the platform itself (Kueue's requeue) submits it again, under a new pod name. The
attempts of an item are the pods carrying its item annotation, in creation order, whether they still exist
(the final pod list), were only seen by the observer (last seen state), or were only recorded by the
operator when it submitted them (a pod created and gone between two snapshots, or refused at admission).
Pure functions: the callers read the cluster, the observer's files and the audit log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from gpupoc.common.outcomes import WorkloadOutcome
from gpupoc.common.timefmt import parse_time, rfc3339
from gpupoc.pipeline.wave import TERMINAL
from gpupoc.pipeline.wave import item_key as item_of
from gpupoc.pipeline.workload_outcome import (
    Deletion,
    OutcomeRecord,
    Rejection,
    Statement,
    classify,
    event_statements,
    group_event_statements,
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
        out = classify(pod, present=key in now, events=event_statements(evidence.events, *key),
                       owner=evidence.owner.get(key, []), deletions=evidence.deletions.get(key, []), uids=uids)
        a = Attempt(item, 0, key[0], key[1], pod, key in now, _by(pod, sub is not None), out,
                    created_at=_created(pod, sub))
        by_item[item].append(a)
    for s in submissions:
        if s.item not in by_item or (s.namespace, s.pod) in pods:
            continue
        if s.rejection is None and s.pod is None:
            continue
        key = (s.namespace, s.pod or "")
        out = classify(None, present=False, events=event_statements(evidence.events, *key),
                       owner=evidence.owner.get(key, []), deletions=evidence.deletions.get(key, []),
                       rejection=s.rejection, uids=uids)
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


# ---- while the wave runs: which items still lack an outcome ----
@dataclass(frozen=True)
class Open:
    """A wave item still without its final outcome, and what it waits for."""

    item: str
    waiting_for: str


def open_items(items: dict[str, str], seen: dict[str, list[str]], present: dict[tuple[str, str], dict],
               last_seen: dict[tuple[str, str], dict], events: list[dict], gone_at: dict[tuple[str, str], float],
               now: float, limit: int, wait_s: float) -> list[Open]:
    """Items whose outcome is not final yet.

    ``seen``: item -> pod names in creation order; ``present``: pods that exist now; ``gone_at``: when each
    vanished pod was first missed (monotonic seconds). An item whose latest pod was preempted or evicted waits
    ``wait_s`` for its next attempt while it has attempts left (``limit`` resubmissions).
    """
    out = []
    for item, ns in items.items():
        names = seen.get(item) or []
        if not names:
            out.append(Open(item, "its pod to be created"))
            continue
        key = (ns, names[-1])
        if key in present:
            phase = ((present[key].get("status") or {}).get("phase")) or "Pending"
            if phase not in TERMINAL:
                out.append(Open(item, f"{names[-1]} ({phase})"))
            continue
        outcome = classify(last_seen.get(key), present=False, events=event_statements(events, *key),
                           owner=group_event_statements(events, *key)).outcome
        if outcome.resubmittable and len(names) <= limit and now - gone_at.get(key, now) < wait_s:
            out.append(Open(item, f"a new attempt after {names[-1]} was {outcome.value}"))
    return out
