"""Typed rows of a wave, read by every reconstruction: each workload's timeline (its moments and what it asked
for), each pod in each observer snapshot (with what the platform said), and the GPUs there were."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields
from functools import cache
from datetime import datetime

from gpupoc.common.timefmt import parse_time, rfc3339
from gpupoc.pipeline.readable import ExplainContext, explains

# What a scheduler's own object says about a pod: (reason, message, the object and field it is read from).
Said = tuple[str | None, str, str]


@dataclass(frozen=True)
class WorkloadTimeline:
    """One workload's moments (UTC) and what it asked for."""

    workload_key: str
    pod: str
    namespace: str
    tenant: str
    pool: str
    priority_class: str
    priority: int
    gpus: int
    submitted_at: datetime | None = None
    released_at: datetime | None = None
    scheduled_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    phase: str = ""
    node: str | None = None
    gang: str | None = None       # the gang (plan key) this attempt is a replica of
    gang_size: int = 1            # pods of its gang that must run together (min_available)

    @property
    def ready_at(self) -> datetime | None:
        """When the platform could first schedule it: the release, else the submission."""
        return self.released_at or self.submitted_at

    @property
    def wait_seconds(self) -> float | None:
        if self.ready_at is None or self.scheduled_at is None:
            return None
        return max(0.0, (self.scheduled_at - self.ready_at).total_seconds())


_TEXTS = ("pod", "namespace", "phase", "node", "reason", "message", "event_reason", "event_message", "item", "gang")
_GATES: dict[tuple[str, ...], tuple[str, ...]] = {}
_SAID: dict[tuple[Said, ...], tuple[Said, ...]] = {}


@dataclass(frozen=True, slots=True)
class Observation:
    """One pod in one snapshot: its state and the platform's own explanation at that moment (slotted: a wave
    of 10,000 pods keeps some 100,000 of them)."""

    taken_at: datetime
    pod: str
    namespace: str
    phase: str = "Pending"
    node: str | None = None
    gates: tuple[str, ...] = ()
    reason: str | None = None     # condition PodScheduled=False reason (Unschedulable, SchedulingGated...)
    message: str | None = None    # its message, or the latest scheduling event's message
    event_reason: str | None = None
    event_message: str | None = None
    position: int | None = None   # queue position if the platform offers one (Kueue visibility API)
    eta: datetime | None = None   # expected start if the platform offers one
    item: str = ""                # the wave item the pod runs
    # What the scheduler's own objects say (Kueue Workload, Volcano or KAI PodGroup), each text in the order a
    # user reads them, not judged: the reconstruction judges them (``congestion.reconstruct``). The source names
    # the object and field: "Workload team-a/w condition QuotaReserved".
    scheduler_said: tuple[Said, ...] = ()
    gang: str | None = None               # the gang the pod belongs to (its object name)

    def __post_init__(self) -> None:
        """One copy of each text: a wave's observations repeat a few messages, and each pod's names, snapshot
        after snapshot (``sys.intern``; 100,000 observations at 10,000 pods)."""
        for name in _TEXTS:
            value = getattr(self, name)
            if type(value) is str:
                object.__setattr__(self, name, sys.intern(value))
        if self.gates:
            gates = tuple(self.gates)
            object.__setattr__(self, "gates", _GATES.setdefault(gates, gates))
        if self.scheduler_said:  # a gang's texts repeat for each member, snapshot after snapshot
            said = tuple((r, sys.intern(m), sys.intern(src)) for r, m, src in self.scheduler_said)
            object.__setattr__(self, "scheduler_said", _SAID.setdefault(said, said))

    @property
    def holds_gpus(self) -> bool:
        return bool(self.node) and self.phase not in ("Succeeded", "Failed")

    def to_dict(self) -> dict:
        """JSON-able (times as RFC 3339)."""
        d = {name: getattr(self, name) for name in _observation_fields()}  # flat: no asdict's deep copy
        d.update(taken_at=rfc3339(self.taken_at), eta=rfc3339(self.eta) if self.eta else None, gates=list(self.gates),
                 scheduler_said=[list(s) for s in self.scheduler_said])
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Observation":
        """The observation ``to_dict`` wrote (one written with a single ``scheduler_reason``, ``_message`` and
        ``_source`` reads as that one text)."""
        known = _observation_fields()
        said = [tuple(s) for s in d.get("scheduler_said") or ()]
        if not said and d.get("scheduler_message"):
            said = [(d.get("scheduler_reason"), d["scheduler_message"], d.get("scheduler_source") or "")]
        return cls(**{**{k: v for k, v in d.items() if k in known}, "taken_at": parse_time(d["taken_at"]),
                      "eta": parse_time(d.get("eta")), "gates": tuple(d.get("gates") or ()),
                      "scheduler_said": tuple(said)})

    @property
    def pod_said(self) -> list[tuple[str | None, str]]:
        """(reason, text) of what the pod itself says here (its condition, its latest event), readable or not."""
        return [(r, t) for r, t in ((self.reason, self.message), (self.event_reason, self.event_message)) if t]

    def explanation(self, ctx: ExplainContext) -> tuple[str | None, str | None]:
        """The most telling (reason, text) a user could read, for the ``queue_snapshots`` table: the scheduler's
        own objects first, else the pod's condition, else its latest event, the first that names a cause
        (``readable.explains``); the pod's condition when none does."""
        for r, t in (*((r, t) for r, t, _ in self.scheduler_said), (self.reason, self.message),
                     (self.event_reason, self.event_message)):
            if explains(r, t, ctx):
                return r, t
        return self.reason or self.event_reason, self.message or self.event_message


@cache
def _observation_fields() -> tuple[str, ...]:
    """The names of ``Observation``'s fields, in order (read once: 100,000 observations are written at scale)."""
    return tuple(f.name for f in fields(Observation))


@dataclass(frozen=True)
class Capacity:
    """GPUs per pool and per node (node -> pool), GPU quota per tenant, and GPUs others held per pool."""

    pool_gpus: dict[str, int]
    tenant_quota: dict[str, int] = field(default_factory=dict)
    node_gpus: dict[str, int] = field(default_factory=dict)
    node_pool: dict[str, str] = field(default_factory=dict)
