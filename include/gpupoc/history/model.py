"""The typed job table every history format is read into.

One row per job. Columns (``COLUMNS`` gives each one's type and meaning):

========================  ==================  ===================================================================
column                    type                meaning
========================  ==================  ===================================================================
job_id                    string              the scheduler's job id (unique in a history)
user                      string, nullable    who submitted it (hashed ids in the public traces)
vc                        string, nullable    virtual cluster / account / tenant (Helios ``vc``, Slurm ``Account``)
partition                 string, nullable    queue or partition (Slurm ``Partition``)
gpu_num                   int32               GPUs of the whole job (0: a CPU job)
node_num                  int32               nodes of the job (pods of a gang)
cpu_num                   int32, nullable     CPUs of the whole job
type                      string, nullable    workload type (Acme: Pretrain, SFT, Evaluation, Debug, MLLM, Other)
state                     string (JobState)   normalised end state: completed, failed, cancelled, timeout,
                                              node_fail, other
state_raw                 string              the state as the source wrote it (``CANCELLED by 1234``)
exit_code                 int32, nullable     the job's exit code when the source has one
submit_time               timestamp, tz       submission (the table's zone: see the metadata's ``timezone``)
start_time                timestamp, tz, null start of execution (null: never started)
end_time                  timestamp, tz, null end (null: still running or never started)
duration_s                float64, nullable   run time: end - start, else the source's duration column
queue_s                   float64, nullable   wait: start - submit, else the source's queue column
source_row                int64               the row in the source file (its line number; the header is row 1)
skip_reason               string, nullable    why the job cannot be replayed (SkipReason), null when it can
========================  ==================  ===================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum


class JobState(str, Enum):
    """A job's end state, normalised across schedulers."""

    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMEOUT = "timeout"
    NODE_FAIL = "node_fail"
    OTHER = "other"


class SkipReason(str, Enum):
    """Why a job of the history cannot be replayed; such jobs are counted and reported, never dropped silently."""

    NOT_STARTED = "not_started"          # no start time: cancelled or still pending before it ran
    NO_DURATION = "no_duration"          # no end time (still running) or a run time of zero
    NO_GPU = "no_gpu"                    # a CPU job
    UNEVEN_GPUS = "uneven_gpus"          # gpu_num is not a multiple of node_num (pods of a gang are equal)
    TOO_LARGE = "too_large"              # larger than the cluster (or than any pool's nodes)
    TOO_LARGE_FOR_TENANT = "too_large_for_tenant"  # beyond its tenant's GPU quota or the tenant's pools
    STATE_OTHER = "state_other"          # an end state with no replay rule (preempted, requeued, ...)


# Source state words (upper-cased, first word) -> normalised state. Slurm, Acme/Helios (which use Slurm's),
# Kubernetes pod phases and Volcano/Kueue job phases.
_STATE_WORDS = {
    JobState.COMPLETED: ("COMPLETED", "SUCCEEDED", "SUCCESS", "SUCCESSFUL", "DONE", "FINISHED", "COMPLETE"),
    JobState.FAILED: ("FAILED", "FAIL", "ERROR", "OUT_OF_MEMORY", "OOM", "OOMKILLED", "BOOT_FAIL"),
    JobState.CANCELLED: ("CANCELLED", "CANCELED", "ABORTED", "TERMINATED", "KILLED"),
    JobState.TIMEOUT: ("TIMEOUT", "TIMED_OUT", "DEADLINEEXCEEDED", "DEADLINE_EXCEEDED"),
    JobState.NODE_FAIL: ("NODE_FAIL", "NODEFAIL", "NODE_FAILURE"),
}
_STATE_BY_WORD = {word: state for state, words in _STATE_WORDS.items() for word in words}


def normalise_state(raw: str) -> JobState:
    """``CANCELLED by 1234`` -> cancelled, ``Succeeded`` -> completed, ``PREEMPTED`` -> other."""
    words = raw.strip().split()
    return _STATE_BY_WORD.get(words[0].upper(), JobState.OTHER) if words else JobState.OTHER


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One job of a history (see the module docstring for every column)."""

    job_id: str
    submit_time: datetime
    gpu_num: int
    state: JobState
    state_raw: str
    source_row: int
    node_num: int = 1
    user: str | None = None
    vc: str | None = None
    partition: str | None = None
    cpu_num: int | None = None
    type: str | None = None
    exit_code: int | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    duration_s: float | None = None
    queue_s: float | None = None
    skip_reason: SkipReason | None = None

    @property
    def gpu_seconds(self) -> float:
        """GPU time the job held: GPUs x run time (0 when the run time is unknown)."""
        return self.gpu_num * (self.duration_s or 0.0)

    def group(self, by: str) -> str:
        """The job's user or vc (``by``), ``(none)`` when the source has none."""
        return getattr(self, by) or "(none)"

    def with_skip(self, reason: SkipReason | None) -> "JobRecord":
        return replace(self, skip_reason=reason)


# column name -> (arrow type name, description); the order is the table's column order.
COLUMNS: dict[str, tuple[str, str]] = {
    "job_id": ("string", "the scheduler's job id (unique in a history)"),
    "user": ("string", "who submitted it"),
    "vc": ("string", "virtual cluster, account or tenant"),
    "partition": ("string", "queue or partition"),
    "gpu_num": ("int32", "GPUs of the whole job"),
    "node_num": ("int32", "nodes of the job"),
    "cpu_num": ("int32", "CPUs of the whole job"),
    "type": ("string", "workload type"),
    "state": ("string", "normalised end state (JobState)"),
    "state_raw": ("string", "the state as the source wrote it"),
    "exit_code": ("int32", "exit code, when the source has one"),
    "submit_time": ("timestamp", "submission time"),
    "start_time": ("timestamp", "start of execution"),
    "end_time": ("timestamp", "end of execution"),
    "duration_s": ("float64", "run time in seconds"),
    "queue_s": ("float64", "wait before the start in seconds"),
    "source_row": ("int64", "row (line number) in the source file"),
    "skip_reason": ("string", "why the job cannot be replayed (SkipReason)"),
}
