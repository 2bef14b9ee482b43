"""``replay:`` of a test class: take the class's wave from a job history instead of hand-written entries.

A compressed window of the history (``first`` N jobs or a ``window``) becomes one wave item per pod of each
job (``gpupoc.history.plan_wave``), built from the ``template`` workload of the catalogue (image, CPU, memory,
GPU use) with the job's own GPUs, run time, end state and priority; each is released at its compressed
arrival time. ``what_if_factor`` sizes the capacity question of the report.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from gpupoc.common.fields import PositiveInt, PositiveNumber, StrictModel

# The history formats a replay reads (``gpupoc.history.formats.FORMATS``) and the imported table.
REPLAY_FORMATS = ("acme", "helios", "sacct", "csv", "parquet")


class ReplaySpec(StrictModel):
    """Where the wave comes from, which part of the history, how it is compressed and shaped."""

    file: str = Field(min_length=1, description="the job history; a relative path resolves against the plan file")
    format: Literal["acme", "helios", "sacct", "csv", "parquet"] = Field(
        description="acme, helios, sacct, csv (with columns) or parquet (written by `gpupoc history import`)")
    columns: dict[str, str] = Field(default_factory=dict, description="csv: job field -> the file's column "
                                    "(job_id, gpu_num, state and submit_time are required)")
    timezone: str = Field(default="UTC", description="zone of times without an offset")
    skip_bad_rows: bool = Field(default=False, description="replay the good rows of a history with bad ones "
                                "(counted); else a bad row is an error naming the row and column")
    first: PositiveInt | None = Field(default=None, description="from the first job to the N-th job the cluster "
                                      "can run")
    window: str | None = Field(default=None, description="START/END in ISO 8601: the jobs submitted in "
                               "[START, END); times without an offset are in the history's zone")
    compress: PositiveNumber = Field(description="arrival offsets, run times and the history's waits are divided "
                                     "by this (96: a day into 15 minutes)")
    template: str = Field(min_length=1, description="the catalogue workload each replayed pod is built from "
                          "(image, CPU, memory, GPU use); GPUs, pool, run time, exit code and deadline come from "
                          "the history")
    what_if_factor: PositiveNumber = Field(
        default=2.0, description="the capacity question: the waits at this load with the pools' GPUs multiplied "
        "by this factor (a queue model)")
    group_by: Literal["user", "vc"] | None = Field(default=None, description="history groups mapped to tenants; "
                                                   "default: vc when the history has vcs, else user")
    min_duration_seconds: PositiveNumber = Field(default=1.0, description="shortest pod run time")
    short_run_seconds: PositiveNumber = Field(default=300.0, description="history run time under which a job "
                                              "takes the tenant's lowest priority class")
    cut_share: float = Field(default=0.5, gt=0, le=1, description="cancelled and timed-out jobs are cut at this "
                             "share of their pod's run time")

    @model_validator(mode="after")
    def _one_selection(self) -> "ReplaySpec":
        if (self.first is None) == (self.window is None):
            raise ValueError("give exactly one of first (the first N jobs) or window (START/END)")
        if self.columns and self.format != "csv":
            raise ValueError(f"columns only apply to format csv, got format {self.format!r}; remove columns")
        if self.format == "csv" and not self.columns:
            raise ValueError("format csv needs columns (job field -> the file's column), e.g. "
                             "{job_id: JobId, gpu_num: GPUs, state: Status, submit_time: Submitted}")
        return self

    @property
    def columns_text(self) -> str | None:
        """The mapping as ``gpupoc history import --columns`` takes it (``job_id=JobId,gpu_num=GPUs``)."""
        return ",".join(f"{k}={v}" for k, v in self.columns.items()) or None
