"""Typed rows of a replayed class's tables: each job's waits beside the history's, and the capacity question."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ReplayWait:
    """One replayed job of the history: when it was planned and released, its wait in the history (as recorded
    and compressed), on the platform under the replay, and in the queue model."""

    job_id: str
    job_index: int
    tenant: str
    gpus: int                                     # GPUs of the whole job
    pods: int
    pool: str | None = None
    priority_class: str | None = None
    history_state: str | None = None
    planned_release_seconds: float | None = None  # after the schedule's start (compressed arrival)
    release_seconds: float | None = None          # when its first pod's gate was lifted
    release_lag_seconds: float | None = None
    history_wait_seconds: float | None = None     # start - submit in the history
    history_wait_scaled_seconds: float | None = None  # the same divided by the compression
    platform_wait_seconds: float | None = None    # release -> its last pod scheduled (first attempts)
    model_wait_seconds: float | None = None       # the queue model with today's GPUs
    outcome: str | None = None                    # the final outcomes of its pods
    items: str | None = None                      # its wave items, comma-separated


@dataclass
class ReplayCapacity:
    """How long jobs wait at the replay's load: measured, in the history, or in the queue model."""

    scenario: str                                 # history, platform, model_today, model_what_if
    basis: str                                    # history | measured | model
    factor: float
    gpus: int
    pools: str | None = None
    jobs: int | None = None
    wait_p50_seconds: float | None = None
    wait_p90_seconds: float | None = None
    wait_max_seconds: float | None = None
    waited_share: float | None = None             # share of jobs that waited more than a second
    note: str | None = None


REPLAY_TABLES = {"replay_waits": ReplayWait, "replay_capacity": ReplayCapacity}
