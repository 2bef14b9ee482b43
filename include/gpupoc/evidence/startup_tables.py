"""Typed rows of the wave's start-up latency (kube-burner's pod latency quantiles) and its scheduling pace."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class StartupLatency:
    """One pod condition of one wave: nearest-rank quantiles (ms, from release or creation) over the pods that
    became Ready; ``source`` says whether every transition was watched (``watch``) or read from the last
    state of each pod (``last-state``: a later transition may hide the first)."""

    test_class: str
    wave: str
    condition: str                 # PodScheduled | Initialized | ContainersReady | Ready
    pods: int                      # pods measured (those that became Ready)
    pods_seen: int
    source: str
    p50_ms: int | None = None
    p95_ms: int | None = None
    p99_ms: int | None = None
    max_ms: int | None = None
    avg_ms: int | None = None
    pods_scheduled: int | None = None        # the wave's scheduling pace, the same on every row of the wave
    placing_seconds: float | None = None
    pods_per_second: float | None = None
    submission: str | None = None            # operator | bulk
    run_id: str | None = None


@dataclass
class StartupPhase:
    """One start-up phase of one wave (``pipeline.startup_phases``): p50/p90/p99/max (ms) over the pods
    measured, the share of the wave's pods they cover, where the moments came from (the ``Scheduled`` event's
    eventTime, a watch's receipt, a condition's whole-second transition), and, for ``startup`` (creation to
    running), the Kubernetes SLO (p99 at most 5 s). ``refused`` says why the figures were withheld."""

    test_class: str
    wave: str
    phase: str                     # scheduling | starting | readiness | startup | created_to_ready
    pods: int
    pods_seen: int
    errored: int
    source: str                    # watch | last-state
    coverage: float | None = None
    p50_ms: int | None = None
    p90_ms: int | None = None
    p99_ms: int | None = None
    max_ms: int | None = None
    sources: str | None = None
    slo_p99_ms: int | None = None
    within_slo: bool | None = None
    refused: str | None = None
    run_id: str | None = None


STARTUP_TABLES: dict[str, type] = {"startup_latency": StartupLatency, "startup_phases": StartupPhase}
