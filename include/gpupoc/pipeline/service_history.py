"""What a class's services went through, from the observer's snapshots: each Deployment's replicas and each
Service's ready endpoints second by second, each replica's life (created, ready, ended and why), and what a
node failure under a replica cost (endpoint removal, replacement, SLO breach). Pure functions over plain dicts
(docs/services.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from gpupoc.common.outcomes import WorkloadOutcome
from gpupoc.common.timefmt import parse_time
from gpupoc.pipeline.k8s import pod_gpus
from gpupoc.pipeline.workload_outcome import Deletion, classify, event_statements

SERVICE_NAME_LABEL = "kubernetes.io/service-name"   # an EndpointSlice's Service (discovery.k8s.io/v1)
TERMINAL = ("Succeeded", "Failed")


@dataclass(frozen=True)
class Snapshot:
    """One look at one service: its Deployment's replicas and its EndpointSlices' endpoints (by pod name)."""

    at: datetime
    service: str
    desired: int | None
    ready_replicas: int
    available_replicas: int
    ready_endpoints: tuple[str, ...]
    not_ready_endpoints: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"at": self.at.isoformat(), "service": self.service, "desired": self.desired,
                "ready_replicas": self.ready_replicas, "available_replicas": self.available_replicas,
                "ready_endpoints": list(self.ready_endpoints), "not_ready_endpoints": list(self.not_ready_endpoints)}

    @classmethod
    def from_dict(cls, d: dict) -> "Snapshot":
        return cls(parse_time(d["at"]), d["service"], d.get("desired"), int(d.get("ready_replicas") or 0),
                   int(d.get("available_replicas") or 0), tuple(d.get("ready_endpoints") or ()),
                   tuple(d.get("not_ready_endpoints") or ()))


def snapshots(at: datetime, services: list[str], deployments: list[dict], slices: list[dict]) -> list[Snapshot]:
    """One snapshot per service from the listed Deployments and EndpointSlices (a service with neither: none
    desired, nothing ready)."""
    deps = {d["metadata"]["name"]: d for d in deployments}
    out = []
    for name in services:
        ready: list[str] = []
        not_ready: list[str] = []
        for eps in slices:
            if ((eps.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL) != name:
                continue
            for e in eps.get("endpoints") or []:
                pod = (e.get("targetRef") or {}).get("name") or ",".join(e.get("addresses") or [])
                (ready if (e.get("conditions") or {}).get("ready") else not_ready).append(pod)
        dep = deps.get(name) or {}
        status = dep.get("status") or {}
        desired = (dep.get("spec") or {}).get("replicas") if dep else None
        out.append(Snapshot(at, name, desired, int(status.get("readyReplicas") or 0),
                            int(status.get("availableReplicas") or 0), tuple(sorted(ready)), tuple(sorted(not_ready))))
    return out


@dataclass
class Replica:
    """One serving replica as the observer saw it: its last state, when it was first seen ready, when it was
    first seen gone (deleted, terminating or ended)."""

    pod: dict
    first_seen: datetime
    ready_at: datetime | None = None
    gone_at: datetime | None = None

    @property
    def name(self) -> str:
        return self.pod["metadata"]["name"]

    def to_dict(self) -> dict:
        return {"pod": self.pod, "first_seen": self.first_seen.isoformat(),
                "ready_at": self.ready_at.isoformat() if self.ready_at else None,
                "gone_at": self.gone_at.isoformat() if self.gone_at else None}

    @classmethod
    def from_dict(cls, d: dict) -> "Replica":
        return cls(d["pod"], parse_time(d["first_seen"]), parse_time(d.get("ready_at")), parse_time(d.get("gone_at")))


def _ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _gone(pod: dict) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp")) or (pod.get("status") or {}).get("phase") in TERMINAL


@dataclass
class ReplicaTracker:
    """Every replica seen across snapshots (keyed by pod uid, so a recreated name is another replica)."""

    replicas: dict[str, Replica] = field(default_factory=dict)

    def see(self, at: datetime, pods: list[dict]) -> None:
        present = set()
        for pod in pods:
            uid = pod["metadata"].get("uid") or pod["metadata"]["name"]
            present.add(uid)
            r = self.replicas.setdefault(uid, Replica(pod, at))
            r.pod = pod
            if r.ready_at is None and _ready(pod) and not _gone(pod):
                r.ready_at = at
            if r.gone_at is None and _gone(pod):
                r.gone_at = at
        for uid, r in self.replicas.items():
            if uid not in present and r.gone_at is None:
                r.gone_at = at  # deleted between two snapshots


@dataclass(frozen=True)
class ReplicaEnd:
    """How a replica ended, as the platform recorded it."""

    outcome: str            # running | preempted | evicted | deleted | failed | lost | succeeded
    at: datetime | None
    by: str | None          # the preemptor (``ns/pod`` or ``uid ...``), the evicting component, who deleted it
    reason: str | None
    message: str | None


def replica_end(r: Replica, events: list[dict], deletions: list[Deletion] = ()) -> ReplicaEnd:
    """The replica's end from its last state, the events about it and the audited deletes of it
    (``workload_outcome.classify``)."""
    if r.gone_at is None:
        return ReplicaEnd("running", None, None, None, None)
    ns, name = r.pod["metadata"]["namespace"], r.name
    rec = classify(r.pod, present=False, events=event_statements(events, ns, name), deletions=list(deletions))
    outcome = rec.outcome.value if rec.outcome is not WorkloadOutcome.PENDING else "deleted"
    return ReplicaEnd(outcome, rec.at or r.gone_at, rec.by, rec.reason, rec.message)


def endpoint_dropped_at(history: list[Snapshot], service: str, pod: str, since: datetime) -> datetime | None:
    """When ``pod`` was first no longer a ready endpoint of ``service`` at or after ``since`` (None: never seen
    dropped while the observer looked)."""
    for s in sorted((s for s in history if s.service == service and s.at >= since), key=lambda s: s.at):
        if pod not in s.ready_endpoints:
            return s.at
    return None


def replacement_ready_at(replicas: list[Replica], service_pods: set[str], since: datetime) -> tuple[str | None,
                                                                                                  datetime | None]:
    """The first replica of the service created after ``since`` that became ready, and when."""
    new = [r for r in replicas if r.name in service_pods and r.ready_at is not None
           and (parse_time(r.pod["metadata"].get("creationTimestamp")) or r.first_seen) >= since]
    if not new:
        return None, None
    first = min(new, key=lambda r: r.ready_at)
    return first.name, first.ready_at


def held_gpus(replicas: list[Replica]) -> dict[str, int]:
    """GPUs per node held by replicas that ran side by side: per node, the most held at any first-seen moment
    (a replica counts from when it was first seen until it was gone)."""
    moments = sorted({r.first_seen for r in replicas})
    out: dict[str, int] = {}
    for at in moments:
        now: dict[str, int] = {}
        for r in replicas:
            node = (r.pod.get("spec") or {}).get("nodeName")
            if node and r.first_seen <= at and (r.gone_at is None or r.gone_at > at):
                now[node] = now.get(node, 0) + pod_gpus(r.pod)
        for node, gpus in now.items():
            out[node] = max(out.get(node, 0), gpus)
    return out
