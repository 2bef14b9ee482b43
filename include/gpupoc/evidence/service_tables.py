"""Typed rows of a class's services (docs/services.md): the traffic second by second, the SLO it was judged by,
each Deployment's and Service's state as the observer saw it, each replica's life, and a node failure under a
replica."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass
class ServiceProbeRow:
    """One second of one service's traffic, as its load pod measured it."""

    service: str
    workload: str
    tenant: str
    second: int
    ts: datetime | None = None
    sent: int = 0
    ok: int = 0
    unready: int = 0                     # answered 503 "model loading": traffic reached a replica not ready
    unanswered: int = 0                  # no answer at all (refused, timed out)
    availability_pct: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    breach: bool | None = None           # the second missed the SLO (availability or judged latency)
    late_sent: int | None = None         # sent more than lag_bound_ms after their slot: the load generator's lag
    late_read: int | None = None         # read more than lag_bound_ms after the replica's own time: its lag too
    max_send_lag_ms: float | None = None
    server_p50_ms: float | None = None   # the replica's own time to answer (its X-Gpupoc-Serve-Ms header)
    server_p95_ms: float | None = None
    server_p99_ms: float | None = None
    judged_p95_ms: float | None = None   # the latencies the SLO judges: the client's reading, the replica's own
    judged_p99_ms: float | None = None   # time for a request sent or read late


@dataclass
class ServiceSloRow:
    """One service's traffic over the class judged against its SLO; ``held`` is empty when no traffic was
    measured (no load pod row, ``seconds`` 0) or when the load generator's own lag distorted more of it than
    ``max_harness_lag_pct`` (``harness_lag``): never a pass."""

    service: str
    workload: str
    tenant: str
    traffic_started_at: datetime | None = None
    traffic_ended_at: datetime | None = None
    seconds: int = 0
    sent: int = 0
    availability_pct: float | None = None
    worst_p95_ms: float | None = None
    worst_p99_ms: float | None = None
    breach_seconds: int | None = None
    unready_answers: int | None = None
    slo_availability_pct: float | None = None
    slo_p95_ms: float | None = None
    slo_p99_ms: float | None = None
    late_sent: int | None = None         # requests the load generator sent late (its lag, not the platform's)
    late_read: int | None = None         # answers it read late
    harness_lag_pct: float | None = None  # % of the requests sent or read late
    max_harness_lag_pct: float | None = None
    harness_lag: bool | None = None      # too much of the window distorted: the SLO is not verified
    held: bool | None = None
    reason: str | None = None


@dataclass
class ServiceHistoryRow:
    """One observer snapshot of one service: the Deployment's replicas and the EndpointSlices' endpoints."""

    at: datetime
    service: str
    desired_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    ready_endpoints: int | None = None
    not_ready_endpoints: int | None = None
    ready_endpoint_pods: str | None = None   # the pods behind the ready endpoints, comma-separated


@dataclass
class ServiceReplicaRow:
    """One serving replica: where it ran, when it was ready, how it ended and, if it was preempted, by whom."""

    service: str
    tenant: str
    pod: str
    node: str | None = None
    gpus: int | None = None
    priority: int | None = None
    created_at: datetime | None = None
    ready_at: datetime | None = None
    ended_at: datetime | None = None
    end: str | None = None                   # running | preempted | evicted | deleted | failed | lost
    end_reason: str | None = None
    end_message: str | None = None
    preemptor: str | None = None
    preemptor_priority: int | None = None
    preempted_by_higher: bool | None = None  # preempted by a named workload of higher priority (empty: not preempted
    #                                          or, with preemption_judged "unresolved", no record names a known pod)
    preemptor_named_by: str | None = None    # the record that named the preemptor, or why none did
    preemption_judged: str | None = None     # preempted: judged or unresolved (pipeline/preemptors.py)


@dataclass
class ServiceRecoveryRow:
    """A node failure under a serving replica: how long the dead endpoint stayed ready, how long until a
    replacement was ready, and how many seconds of traffic missed the SLO."""

    service: str
    node: str
    failed_at: datetime | None = None
    recovered_at: datetime | None = None
    victim_pods: str | None = None
    endpoint_removed: bool | None = None
    endpoint_removal_seconds: float | None = None
    replacement_pod: str | None = None
    replacement_ready: bool | None = None
    replacement_seconds: float | None = None
    breach_seconds: int | None = None
    unready_answers: int | None = None
    injection: str | None = None             # how the node was failed (sim-endpoint, command, taint, drain)
    reason: str | None = None


SERVICE_TABLES: dict[str, type] = {
    "service_probes": ServiceProbeRow,
    "service_slo": ServiceSloRow,
    "service_history": ServiceHistoryRow,
    "service_replicas": ServiceReplicaRow,
    "service_recovery": ServiceRecoveryRow,
}
