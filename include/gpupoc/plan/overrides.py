"""Per-item overrides of a replayed wave item, and the workload a wave item's pod is built from.

A replayed item (``WaveItem.replay``) is one pod of one job of a history: the template workload of the
catalogue with the job's own GPUs, pool, run time (``WORKLOAD_DURATION_SECONDS``), exit code
(``WORKLOAD_EXIT_CODE``), active deadline, task type and, for a job of several nodes, its gang size (all its
pods). ``item_workload`` applies them, so the pod builder (``gpupoc.podspec.build_pod``) needs no change to
build it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# What a replayed pod is expected to end with, by the outcome of its history job.
EXPECTED_REASON = {"succeed": "Completed", "fail": "Error", "deadline": "DeadlineExceeded", "cancel": None}
REPLAY_JOB_ENV = "GPUPOC_REPLAY_JOB"  # the history's job id, in the pod's env


@dataclass(frozen=True)
class ReplayOverride:
    """What one pod of a replayed job changes in its template, and the job's replay bookkeeping."""

    job_id: str
    job_index: int                       # the job's index in the replay wave (its pods share it)
    replica: int                         # this pod among the job's pods (one per node of the job)
    replicas: int
    gpus: int                            # GPUs of this pod
    job_gpus: int                        # GPUs of the whole job
    pool: str
    duration_seconds: float              # run time once started (compressed)
    expected_exit_code: int | None       # None: ended by a cancel or a deadline
    outcome: str                         # succeed, fail, cancel, deadline (gpupoc.history.replay.Outcome)
    at_seconds: float                    # release offset after the wave's release (compressed)
    task_type: str
    cancel_after_seconds: float | None = None
    deadline_seconds: float | None = None
    history_state: str = ""
    history_wait_seconds: float | None = None
    history_wait_scaled_seconds: float | None = None

    @property
    def active_deadline_seconds(self) -> int | None:
        """``spec.activeDeadlineSeconds`` is whole seconds: the deadline rounded up."""
        return None if self.deadline_seconds is None else max(1, math.ceil(self.deadline_seconds))

    @property
    def held_seconds(self) -> float:
        """How long the pod holds its GPUs once started: until it ends, is cancelled or hits its deadline."""
        return self.cancel_after_seconds or self.deadline_seconds or self.duration_seconds


@dataclass(frozen=True)
class ReplayPod:
    """One pod of a replayed wave: its tenant, priority class and overrides (``gpupoc.plan.replay``)."""

    tenant: str
    priority_class: str
    override: ReplayOverride


def item_workload(plan, item):
    """The catalogue workload ``item`` runs, with a replayed item's overrides applied."""
    workload = plan.workload(item.workload)
    o = getattr(item, "replay", None)
    if o is None:
        return workload
    return workload.model_copy(update={
        "gpus": o.gpus, "pool": o.pool, "duration_seconds": o.duration_seconds,
        "expected_exit_code": o.expected_exit_code, "expected_reason": EXPECTED_REASON.get(o.outcome),
        "active_deadline_seconds": o.active_deadline_seconds, "task_type": o.task_type,
        "env": {**workload.env, REPLAY_JOB_ENV: o.job_id},
        "replicas": o.replicas, "min_available": None,  # a job of several nodes is a gang of all its pods
    })


def planned_seconds(plan, item) -> float:
    """How long the item is planned to hold its GPUs once started (its workload's run time, or a replayed
    item's time until its end, cancel or deadline)."""
    o = getattr(item, "replay", None)
    return o.held_seconds if o is not None else plan.workload(item.workload).duration_seconds
