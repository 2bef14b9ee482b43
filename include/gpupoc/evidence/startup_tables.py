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


STARTUP_TABLES: dict[str, type] = {"startup_latency": StartupLatency}
