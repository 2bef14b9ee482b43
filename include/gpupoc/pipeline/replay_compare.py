"""A replayed wave against its history: each job's own wait beside the platform's, and the capacity question.

Pure functions over plain rows. Per replayed job (``job_waits``): when it was planned and actually released,
the history's wait (start - submit) as recorded and divided by the compression, the platform's wait under the
replay (from the job's release until its last pod was scheduled, first attempts), and the queue model's wait
for it. ``capacity`` answers "at this load, how long would jobs wait with today's GPUs, and with the pools
enlarged by the what-if factor": the queue model (``gpupoc.pipeline.queue_model``) replayed with the replay's
arrival times and run times, the measured waits and the history's beside it so a reader can judge the model.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone

import numpy as np

from gpupoc.common.timefmt import parse_time
from gpupoc.pipeline.queue_model import expected_waits
from gpupoc.pipeline.timelines import WorkloadTimeline

_EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)  # the model needs only the arrival offsets
MODEL_NOTE = ("queue model: per pool, jobs served in priority order as they arrive, each starts when its pool "
              "has enough free GPUs (no node fragmentation, preemption, quota or platform delay) and holds them "
              "for its replayed run time")


@dataclass(frozen=True)
class ReplayJob:
    """One replayed job as planned (from its wave items)."""

    job_index: int
    job_id: str
    tenant: str
    gpus: int
    pool: str
    priority_class: str
    priority: int
    at_seconds: float
    held_seconds: float
    history_state: str
    history_wait_seconds: float | None
    history_wait_scaled_seconds: float | None
    items: tuple[str, ...]  # the wave items (pods) of the job


def jobs_of(plan, items) -> list[ReplayJob]:
    """The replayed jobs of a class's wave items (items without ``replay`` are left out)."""
    by_job: dict[int, list] = {}
    for item in items:
        if item.replay is not None:
            by_job.setdefault(item.replay.job_index, []).append(item)
    out = []
    for index, pods in sorted(by_job.items()):
        first, o = pods[0], pods[0].replay
        out.append(ReplayJob(
            job_index=index, job_id=o.job_id, tenant=first.tenant, gpus=o.job_gpus, pool=o.pool,
            priority_class=first.priority_class, priority=plan.priority_value(first.priority_class),
            at_seconds=o.at_seconds, held_seconds=o.held_seconds, history_state=o.history_state,
            history_wait_seconds=o.history_wait_seconds, history_wait_scaled_seconds=o.history_wait_scaled_seconds,
            items=tuple(i.name for i in pods)))
    return out


def model_waits(jobs: list[ReplayJob], pool_gpus: dict[str, int]) -> dict[int, float]:
    """Job index -> the queue model's wait, each job arriving at its replayed offset."""
    t0 = _EPOCH
    timelines = [WorkloadTimeline(
        workload_key=str(j.job_index), pod=str(j.job_index), namespace=j.tenant, tenant=j.tenant, pool=j.pool,
        priority_class=j.priority_class, priority=j.priority, gpus=j.gpus,
        submitted_at=t0 + timedelta(seconds=j.at_seconds), released_at=t0 + timedelta(seconds=j.at_seconds))
        for j in jobs]
    waits = expected_waits(timelines, {str(j.job_index): j.held_seconds for j in jobs}, pool_gpus)
    return {j.job_index: waits[(j.tenant, str(j.job_index))] for j in jobs if (j.tenant, str(j.job_index)) in waits}


def scaled_pools(pool_gpus: dict[str, int], factor: float) -> dict[str, int]:
    """Each pool's GPUs multiplied by ``factor`` (rounded down, at least 1)."""
    return {p: max(1, math.floor(g * factor + 1e-9)) for p, g in pool_gpus.items()}


def job_waits(jobs: list[ReplayJob], runs: list[dict], schedule_start: datetime | None,
              pool_gpus: dict[str, int]) -> list[dict]:
    """``replay_waits`` rows: one per replayed job (see the module docstring)."""
    first = {r["item"]: r for r in runs if r.get("item") and (r.get("attempt") or 1) == 1}
    final = {r["item"]: r for r in runs if r.get("item") and r.get("final_attempt")}
    model = model_waits(jobs, pool_gpus)
    rows = []
    for j in jobs:
        pods = [first[i] for i in j.items if i in first]
        released = [_t(p.get("released_at")) for p in pods]
        scheduled = [_t(p.get("scheduled_at")) for p in pods]
        release = min((t for t in released if t), default=None)
        all_scheduled = pods and len(pods) == len(j.items) and all(scheduled)
        wait = (max(scheduled) - release).total_seconds() if release and all_scheduled else None
        outcomes = sorted({final[i]["outcome"] for i in j.items if i in final and final[i].get("outcome")})
        offset = (release - schedule_start).total_seconds() if release and schedule_start else None
        rows.append({
            "job_id": j.job_id, "job_index": j.job_index, "tenant": j.tenant, "gpus": j.gpus, "pods": len(j.items),
            "pool": j.pool, "priority_class": j.priority_class, "history_state": j.history_state,
            "planned_release_seconds": j.at_seconds, "release_seconds": _r(offset),
            "release_lag_seconds": _r(offset - j.at_seconds) if offset is not None else None,
            "history_wait_seconds": j.history_wait_seconds,
            "history_wait_scaled_seconds": j.history_wait_scaled_seconds,
            "platform_wait_seconds": _r(max(0.0, wait)) if wait is not None else None,
            "model_wait_seconds": _r(model.get(j.job_index)), "outcome": ",".join(outcomes) or None,
            "items": ",".join(j.items)})
    return rows


@dataclass(frozen=True)
class CapacityRow:
    """One answer to "how long do jobs wait at this load": measured, from the history, or from the model."""

    scenario: str             # history, platform, model_today, model_what_if
    basis: str                # history | measured | model
    factor: float
    gpus: int
    pools: str
    jobs: int
    wait_p50_seconds: float | None
    wait_p90_seconds: float | None
    wait_max_seconds: float | None
    waited_share: float | None  # share of jobs that waited more than a second
    note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def capacity(jobs: list[ReplayJob], waits: list[dict], pool_gpus: dict[str, int], factor: float,
             compression: float) -> list[CapacityRow]:
    """The capacity question at the replay's load (rows in the order the report shows them)."""
    enlarged = scaled_pools(pool_gpus, factor)
    today, what_if = model_waits(jobs, pool_gpus), model_waits(jobs, enlarged)

    def row(scenario, basis, f, pools, values, note=""):
        return CapacityRow(scenario, basis, f, sum(pools.values()), _pools(pools), len(values), *_stats(values),
                           note=note)

    return [
        row("history", "history", 1.0, pool_gpus, [w["history_wait_scaled_seconds"] for w in waits
                                                  if w["history_wait_scaled_seconds"] is not None],
            f"the history's own waits (start - submit) / {compression:g}, on the history's cluster"),
        row("platform", "measured", 1.0, pool_gpus, [w["platform_wait_seconds"] for w in waits
                                                    if w["platform_wait_seconds"] is not None],
            "measured under the replay: from each job's release until its last pod was scheduled"),
        row("model_today", "model", 1.0, pool_gpus, list(today.values()), MODEL_NOTE),
        row("model_what_if", "model", factor, enlarged, list(what_if.values()),
            f"{MODEL_NOTE}; every pool's GPUs x {factor:g}"),
    ]


def _stats(values: list[float]) -> tuple[float | None, float | None, float | None, float | None]:
    if not values:
        return None, None, None, None
    a = np.asarray(values, dtype=float)
    return (_r(float(np.percentile(a, 50))), _r(float(np.percentile(a, 90))), _r(float(a.max())),
            round(float((a > 1.0).mean()), 4))


def _pools(pools: dict[str, int]) -> str:
    return ", ".join(f"{p} {g}" for p, g in pools.items())


def _t(v) -> datetime | None:
    if v is None or isinstance(v, datetime):
        return v
    return parse_time(str(v))


def _r(v: float | None) -> float | None:
    return None if v is None else round(float(v), 3)
