"""Each pod's condition transitions as a watch saw them, and the wave's start-up latency as kube-burner reports it.

The observer keeps only a pod's last state, in which a condition's ``lastTransitionTime`` may already be a later
transition (Ready=False after the pod ended). The bulk submitter's watch sees every update, so it keeps the
first time each condition became True. kube-burner's ``podLatency`` measurement (``pkg/measurements/
pod_latency.go``) does the same for ``PodScheduled``, ``Initialized``, ``ContainersReady`` and ``Ready``
(the first True ``lastTransitionTime`` of each), measures each from the pod's creation, skips pods that never
became Ready, clips negative values (second-precision timestamps) to zero and gives nearest-rank quantiles
``v[ceil(n*q)-1]`` at 0.5, 0.95 and 0.99. A gated pod cannot be scheduled before its release, so here each
latency is measured from the release (the pod's ``released-at`` annotation) when it has one, else from its
creation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from gpupoc.common.constants import RELEASED_AT
from gpupoc.common.timefmt import parse_time, rfc3339
from gpupoc.pipeline.timelines import Observation

CONDITIONS = ("PodScheduled", "Initialized", "ContainersReady", "Ready")
QUANTILES = (0.5, 0.95, 0.99)
MAX_SAID = 4  # the platform's distinct words about one pod's wait kept (a pod says the same again and again)


@dataclass
class PodTransitions:
    """One pod: when it was created and released, and when each condition first became True."""

    namespace: str
    name: str
    item: str
    created_at: datetime | None = None
    released_at: datetime | None = None
    first_true: dict[str, datetime] = field(default_factory=dict)
    phases: list[str] = field(default_factory=list)  # every phase the watch saw, in order
    node: str | None = None
    said: list[tuple[datetime, str | None, str]] = field(default_factory=list)  # PodScheduled=False: when, why
    relisted_waiting: bool = False  # the watch re-listed while the pod waited: a word may have gone unseen
    received: dict[str, datetime] = field(default_factory=dict)  # first receipt: Seen, Running, each first True
    scheduled_event_at: datetime | None = None  # the ``Scheduled`` event's eventTime (microseconds)

    def observe(self, pod: dict, received: datetime | None = None) -> None:
        """Take what one watched state of the pod says (earlier first-True times are kept); ``received``: when
        the watch brought this state (clusterloader2 stamps each transition at receipt)."""
        meta, status = pod.get("metadata") or {}, pod.get("status") or {}
        if received is not None:
            self._receive(status, received)
        self.created_at = self.created_at or parse_time(meta.get("creationTimestamp"))
        self.released_at = self.released_at or parse_time((meta.get("annotations") or {}).get(RELEASED_AT))
        self.node = self.node or (pod.get("spec") or {}).get("nodeName")
        for c in status.get("conditions") or []:
            at = parse_time(c.get("lastTransitionTime"))
            if c.get("type") in CONDITIONS and c.get("status") == "True" and at and c["type"] not in self.first_true:
                self.first_true[c["type"]] = at
        phase = status.get("phase")
        if phase and (not self.phases or self.phases[-1] != phase):
            self.phases.append(phase)
        self._take_word(status)

    def _receive(self, status: dict, received: datetime) -> None:
        """The first receipt of the pod, of its Running phase and of each condition's True."""
        now_true = [c["type"] for c in status.get("conditions") or [] if c.get("status") == "True"
                    and c.get("type") in CONDITIONS]
        for what in ["Seen", *now_true, *(["Running"] if status.get("phase") == "Running" else [])]:
            self.received.setdefault(what, received)

    def _take_word(self, status: dict) -> None:
        """A PodScheduled=False the platform set (not a gate's): its moment, reason and message, each new one kept."""
        c = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
        if not c or c.get("status") != "False" or c.get("reason") == "SchedulingGated" or not c.get("message"):
            return
        at, word = parse_time(c.get("lastTransitionTime")), (c.get("reason"), c["message"])
        if at and len(self.said) < MAX_SAID and (not self.said or self.said[-1][1:] != word):
            self.said.append((at, *word))

    @property
    def start(self) -> datetime | None:
        return self.released_at or self.created_at

    def latency_ms(self, condition: str) -> int | None:
        at, start = self.first_true.get(condition), self.start
        if at is None or start is None:
            return None
        return max(0, int((at - start).total_seconds() * 1000))

    def to_dict(self) -> dict:
        return {"namespace": self.namespace, "pod": self.name, "item": self.item, "node": self.node,
                "created_at": rfc3339(self.created_at) if self.created_at else None,
                "released_at": rfc3339(self.released_at) if self.released_at else None,
                "first_true": {k: rfc3339(v) for k, v in sorted(self.first_true.items())}, "phases": self.phases,
                "said": [{"at": rfc3339(at), "reason": r, "message": m} for at, r, m in self.said],
                "relisted_waiting": self.relisted_waiting,
                "received": {k: rfc3339(v) for k, v in sorted(self.received.items())},
                "scheduled_event_at": rfc3339(self.scheduled_event_at) if self.scheduled_event_at else None}

    @classmethod
    def from_dict(cls, d: dict) -> "PodTransitions":
        return cls(d["namespace"], d["pod"], d.get("item") or "", parse_time(d.get("created_at")),
                   parse_time(d.get("released_at")),
                   {k: parse_time(v) for k, v in (d.get("first_true") or {}).items() if parse_time(v)},
                   list(d.get("phases") or []), d.get("node"),
                   [(parse_time(w["at"]), w.get("reason"), w["message"]) for w in d.get("said") or []
                    if parse_time(w.get("at")) and w.get("message")],
                   bool(d.get("relisted_waiting")),
                   {k: parse_time(v) for k, v in (d.get("received") or {}).items() if parse_time(v)},
                   parse_time(d.get("scheduled_event_at")))


def nearest_rank(sorted_values: list[int], q: float) -> int | None:
    """kube-burner's quantile: ``v[ceil(n*q)-1]`` of the sorted values (None when there are none)."""
    if not sorted_values:
        return None
    return sorted_values[max(0, math.ceil(len(sorted_values) * q) - 1)]


def latency_rows(pods: list[PodTransitions], test_class: str, wave: str = "wave") -> list[dict]:
    """One row per condition: p50, p95, p99, max, avg (ms) over the pods that became Ready, and how many."""
    ready = [p for p in pods if "Ready" in p.first_true and p.start is not None]
    rows = []
    for cond in CONDITIONS:
        values = sorted(v for v in (p.latency_ms(cond) for p in ready) if v is not None)
        rows.append({"test_class": test_class, "wave": wave, "condition": cond, "pods": len(values),
                     "pods_seen": len(pods), **{f"p{int(q * 100)}_ms": nearest_rank(values, q) for q in QUANTILES},
                     "max_ms": values[-1] if values else None,
                     "avg_ms": round(sum(values) / len(values)) if values else None})
    return rows


def scheduling_throughput(pods: list[PodTransitions]) -> dict:
    """Pods placed per second while the wave was being placed: pods scheduled over the span from the first
    pod's start (release, else creation) to the last ``PodScheduled``."""
    scheduled = sorted(p.first_true["PodScheduled"] for p in pods if "PodScheduled" in p.first_true)
    starts = [p.start for p in pods if p.start is not None]
    if not scheduled or not starts:
        return {"pods_scheduled": len(scheduled), "span_seconds": None, "pods_per_second": None}
    span = (scheduled[-1] - min(starts)).total_seconds()
    rate = round(len(scheduled) / span, 3) if span > 0 else None
    return {"pods_scheduled": len(scheduled), "span_seconds": round(span, 3), "pods_per_second": rate,
            "first_start": rfc3339(min(starts)), "last_scheduled": rfc3339(scheduled[-1])}


def watch_looks(pods: list[PodTransitions], explain_after_s: float, silence_counts: bool) -> list[Observation]:
    """What the bulk shards' watches saw of each pod's wait, as observations the congestion reconstruction judges
    as it judges scheduling events: each PodScheduled=False the platform set (its reason and message) and, where
    the watch followed the pod through its whole wait (no re-list meanwhile) and ``silence_counts``, one look
    without a word at the moment the wait began to need an explanation. That look makes the wait observed:
    explained if the platform said anything of it (a word above, or an event), unexplained if it said nothing.
    ``silence_counts`` is False where the platform explains waits in objects the watch does not see (Kueue's
    Workloads)."""
    out: list[Observation] = []
    for p in pods:
        out += [Observation(taken_at=at, pod=p.name, namespace=p.namespace, reason=r, message=m, item=p.item)
                for at, r, m in p.said]
        scheduled, start = p.first_true.get("PodScheduled"), p.start
        due = start + timedelta(seconds=explain_after_s) if start else None
        if silence_counts and due and scheduled and due < scheduled and not p.relisted_waiting:
            out.append(Observation(taken_at=due, pod=p.name, namespace=p.namespace, item=p.item))
    return out
