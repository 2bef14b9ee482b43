"""A replay wave: the typed list of pods a window of a history becomes, and its YAML form.

``ReplayWave.items`` are in arrival order. Each item is one job of the history: ``replicas`` pods
(one per node, ``node_num`` of the job) of ``gpus`` GPUs each, released ``at_seconds`` after the wave starts,
running ``duration_seconds`` and ending as ``outcome`` says:

- ``succeed``: exits 0 after ``duration_seconds``;
- ``fail``: exits ``expected_exit_code`` after ``duration_seconds``;
- ``cancel``: deleted ``cancel_after_seconds`` after it starts (before its ``duration_seconds``);
- ``deadline``: killed by the platform ``deadline_seconds`` after it starts (an active deadline).

The YAML (``render_yaml``) reads back with ``load_wave``.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import yaml
from pydantic import Field

from gpupoc.common.fields import NonNegativeNumber, PositiveInt, PositiveNumber, StrictModel
from gpupoc.common.validation import load_yaml_model


class Outcome(str, Enum):
    SUCCEED = "succeed"
    FAIL = "fail"
    CANCEL = "cancel"
    DEADLINE = "deadline"


class ReplayItem(StrictModel):
    index: int = Field(ge=0)
    job_id: str = Field(description="the job of the history this item replays")
    at_seconds: NonNegativeNumber = Field(description="release time after the wave starts (compressed)")
    tenant: str
    pool: str
    gpus: PositiveInt = Field(description="GPUs of each pod")
    replicas: PositiveInt = Field(description="pods of the job: one per node of the history's job")
    node_num: PositiveInt = Field(description="nodes of the history's job (gangs use it)")
    gpus_total: PositiveInt
    duration_seconds: PositiveNumber = Field(description="run time of each pod once started (compressed)")
    outcome: Outcome
    expected_exit_code: int | None = Field(description="null: the pod does not end by itself (cancel, deadline)")
    cancel_after_seconds: PositiveNumber | None = None
    deadline_seconds: PositiveNumber | None = None
    priority_class: str
    task_type: str
    group: str = Field(description="the user or vc of the history")
    history_state: str
    history_run_seconds: NonNegativeNumber
    history_wait_seconds: NonNegativeNumber | None = Field(description="start - submit in the history (not compressed)")
    history_wait_scaled_seconds: NonNegativeNumber | None = Field(description="the history's wait / compression")


class TenantMapping(StrictModel):
    group: str
    tenant: str
    jobs: int
    gpu_seconds: float
    share: float = Field(description="the group's share of the window's replayable GPU time")
    moved: dict[str, int] = Field(default_factory=dict, description="jobs too large for the group's tenant, "
                                  "replayed as another tenant that can run them")


class TenantShare(StrictModel):
    target: float = Field(description="share of the plan's GPU quotas")
    replayed: float = Field(description="share of the replayed GPU time")
    items: int
    peak_gpus: int = Field(description="GPUs held at once if every item started on arrival")
    quota_gpus: int


class Selection(StrictModel):
    """``--window``: ``[window_start, window_end)``; ``--first N``: from the first job's submission to the N-th's."""

    window_start: str
    window_end: str
    first: int | None = None


class ReplayWave(StrictModel):
    source: dict = Field(description="the history: path, sha256, format; synthetic ones add generator and licence")
    plan: str
    test_class: str
    compression: PositiveNumber
    min_duration_seconds: PositiveNumber
    cut_share: float = Field(gt=0, le=1, description="cancelled and timed-out jobs are cut at this share of their run")
    short_run_seconds: PositiveNumber
    priority_rule: str
    selection: Selection
    group_by: str
    jobs_in_window: int
    jobs_replayed: int
    dropped: dict[str, int] = Field(default_factory=dict)
    floored_durations: int = 0
    tenant_mapping: list[TenantMapping]
    tenant_shares: dict[str, TenantShare]
    items: list[ReplayItem]

    @property
    def span_seconds(self) -> float:
        """From the wave's start to the last item's release."""
        return max((i.at_seconds for i in self.items), default=0.0)


class _Flow(dict):
    """A mapping written on one line."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Flow, lambda d, data: d.represent_mapping("tag:yaml.org,2002:map", data, flow_style=True))


def render_yaml(wave: ReplayWave, header: str = "") -> str:
    """The wave under a top-level ``replay:`` key, one line per item and per tenant mapping."""
    data = wave.model_dump(mode="json")
    data["items"] = [_Flow(i) for i in data["items"]]
    data["tenant_mapping"] = [_Flow(m) for m in data["tenant_mapping"]]
    data["tenant_shares"] = {k: _Flow(v) for k, v in data["tenant_shares"].items()}
    body = yaml.dump({"replay": data}, Dumper=_Dumper, sort_keys=False, width=4096, allow_unicode=True)
    comment = "".join(f"# {line}\n" for line in header.splitlines())
    return comment + body


class _Document(StrictModel):
    replay: ReplayWave


def wave_source(path: Path, history, sha256: str) -> dict:
    """What a wave says about its history: the file, and for a synthetic one how it was made and its licence."""
    meta = history.metadata
    origin = meta.get("origin") or meta
    source = {"path": str(path), "sha256": sha256, "format": (meta.get("source") or {}).get("format") or "parquet",
              "timezone": history.timezone, "synthetic": bool(meta.get("synthetic") or origin.get("synthetic"))}
    if source["synthetic"]:
        source.update({k: origin.get(k) for k in ("generator", "command", "figures_source", "licence")})
    return source


def load_wave(path: str | Path) -> ReplayWave:
    """Read a wave written by ``gpupoc history plan --out``; ConfigError lists every problem with its path."""
    return load_yaml_model(_Document, path, "replay wave").replay
