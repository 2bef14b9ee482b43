"""``gpupoc history plan``: turn a window of a history into a replay wave for the plan's cluster.

- Window: jobs submitted in ``[start, end)``, or from the first job to the N-th job the plan's cluster can
  run (``first``; the selection's end is then that job's submission). Jobs in the window that cannot be
  replayed are counted per reason (``dropped``).
- Tenants: ``tenants.map_groups`` (users or vcs -> tenants by share of GPU time; a job too large for its
  group's tenant moves to one that can run it).
- Shape: one pod per node of the job (``replicas = node_num``) with ``gpu_num / node_num`` GPUs each, in the
  first of the tenant's pools it fits (plan order).
- Time: arrival offsets (from the window's start) and run times divided by ``compression``; run times and
  cut points are at least ``min_duration_s`` (counted in ``floored_durations``).
- End states: completed -> succeed (exit 0); failed -> fail with the history's exit code (1 when it has
  none or 0); node_fail -> fail with exit code 137 (killed, as when the node goes; the node is not failed);
  cancelled -> cancel after its run, its pod meant to run ``1 / cut_share`` times as long; timeout ->
  deadline after its run, likewise.
- Priority (``PRIORITY_RULE``): among the tenant's priority classes, by value: a job of a whole node or more
  (or several nodes) takes the highest, a job shorter than ``short_run_s`` in the history the lowest, any
  other the middle one (the lower of two).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from gpupoc.common.test_classes import TestClass
from gpupoc.exceptions import ConfigError
from gpupoc.history.cluster import ClusterShape, gpus_per_pod, replay_skip_reason
from gpupoc.history.formats.values import parse_time, parse_zone
from gpupoc.history.model import JobRecord, JobState, SkipReason
from gpupoc.history.replay import Outcome, ReplayItem, ReplayWave, Selection, TenantMapping, TenantShare
from gpupoc.history.table import History
from gpupoc.history.tenants import TenantTarget, map_groups, tenant_targets

PRIORITY_RULE = ("tenant's classes by value: whole node or more, or several nodes -> highest; history run "
                 "shorter than short_run_seconds -> lowest; otherwise the middle one (the lower of two)")
NODE_FAIL_EXIT_CODE = 137
DEFAULT_FAIL_EXIT_CODE = 1


@dataclass(frozen=True)
class WaveOptions:
    compression: float
    window: tuple[datetime, datetime] | None = None
    first: int | None = None
    group_by: str | None = None          # "user" or "vc"; None: vc when the history has vcs, else user
    test_class: str = TestClass.QUEUE_CONGESTION.value
    min_duration_s: float = 1.0
    short_run_s: float = 300.0
    cut_share: float = 0.5


def parse_window(text: str, zone: str) -> tuple[datetime, datetime]:
    """``START/END`` in ISO 8601; times without an offset are in the history's zone."""
    start_text, sep, end_text = text.partition("/")
    try:
        start, end = parse_time(start_text), parse_time(end_text)
    except ValueError:
        start = end = None
    if not sep or start is None or end is None:
        raise ConfigError("--window", [f"--window: expected START/END in ISO 8601 such as "
                                       f"2023-05-01T00:00/2023-05-02T00:00, got {text!r}"])
    tz = parse_zone(zone)
    start, end = (t if t.tzinfo else t.replace(tzinfo=tz) for t in (start, end))
    if end <= start:
        raise ConfigError("--window", [f"--window: the end {end.isoformat()} is not after the start "
                                       f"{start.isoformat()}; swap them"])
    return start, end


def plan_wave(history: History, plan, options: WaveOptions, source: dict | None = None) -> ReplayWave:
    """The replay wave of ``history`` for ``plan`` (pure: reads nothing, writes nothing)."""
    _check(options, plan)
    cluster = ClusterShape.from_plan(plan)
    jobs = sorted(history.records, key=lambda r: (r.submit_time, r.source_row))
    selected, start, end = _select(jobs, cluster, options)
    dropped: Counter = Counter()
    candidates = []
    for job in selected:
        reason = replay_skip_reason(job, cluster)
        if reason:
            dropped[reason.value] += 1
        else:
            candidates.append(job)
    by = options.group_by or ("vc" if any(j.vc for j in candidates) else "user")
    targets = tenant_targets(plan)
    mapping = map_groups(candidates, by, targets, cluster)
    target_of = {t.name: t for t in targets}
    items, floored = [], 0
    for job in candidates:
        name = mapping.tenant_of(job)
        if name is None:
            dropped[SkipReason.TOO_LARGE_FOR_TENANT.value] += 1
            continue
        tenant = target_of[name]
        pool = cluster.fitting_pools(job, among=tenant.pools)[0]
        item, was_floored = _item(len(items), job, tenant, pool, start, plan, cluster, options, by)
        items.append(item)
        floored += was_floored
    return ReplayWave(
        source=source or {}, plan=plan.name, test_class=options.test_class, compression=options.compression,
        min_duration_seconds=options.min_duration_s, cut_share=options.cut_share,
        short_run_seconds=options.short_run_s, priority_rule=PRIORITY_RULE,
        selection=Selection(window_start=start.isoformat(), window_end=end.isoformat(), first=options.first),
        group_by=by, jobs_in_window=len(selected), jobs_replayed=len(items), dropped=dict(sorted(dropped.items())),
        floored_durations=floored,
        tenant_mapping=[TenantMapping(group=m.group, tenant=m.tenant, jobs=m.jobs, gpu_seconds=round(m.gpu_seconds, 3),
                                      share=round(m.share, 6), moved=m.moved) for m in mapping.assignments],
        tenant_shares=_shares(items, targets), items=items,
    )


def _check(o: WaveOptions, plan) -> None:
    errors = []
    if (o.window is None) == (o.first is None):
        errors.append("selection: give exactly one of --window START/END or --first N")
    if o.first is not None and o.first < 1:
        errors.append(f"--first: expected a positive integer, got {o.first}")
    if not o.compression > 0:
        errors.append(f"--compress: expected a positive factor (96 turns a day into 15 minutes), got {o.compression}")
    if o.group_by not in (None, "user", "vc"):
        errors.append(f"--group-by: expected user or vc, got {o.group_by!r}")
    if not 0 < o.cut_share <= 1:
        errors.append(f"--cut-share: expected a share in (0, 1], got {o.cut_share}")
    if o.test_class not in {tc.value for tc in TestClass}:
        errors.append(f"--class: unknown test class {o.test_class!r}; one of {', '.join(tc.value for tc in TestClass)}")
    if errors:
        raise ConfigError("history plan", errors)


def _select(jobs: list[JobRecord], cluster: ClusterShape, o: WaveOptions):
    if o.window is not None:
        start, end = o.window
        return [j for j in jobs if start <= j.submit_time < end], start, end
    if not jobs:
        raise ConfigError("history plan", ["(history): no jobs; import a history with jobs"])
    chosen, runnable = [], 0
    for job in jobs:
        chosen.append(job)
        runnable += replay_skip_reason(job, cluster) is None
        if runnable == o.first:
            break
    return chosen, chosen[0].submit_time, chosen[-1].submit_time


def _item(index: int, job: JobRecord, tenant: TenantTarget, pool: str, start: datetime, plan,
          cluster: ClusterShape, o: WaveOptions, by: str) -> tuple[ReplayItem, bool]:
    run = job.duration_s / o.compression
    floored = run < o.min_duration_s
    run = max(run, o.min_duration_s)
    outcome, exit_code, cancel_after, deadline, duration = _ending(job, run, o.cut_share)
    wait = job.queue_s
    pool_shape = next(p for p in cluster.pools if p.name == pool)
    item = ReplayItem(
        index=index, job_id=job.job_id, at_seconds=round((job.submit_time - start).total_seconds() / o.compression, 3),
        tenant=tenant.name, pool=pool, gpus=gpus_per_pod(job), replicas=job.node_num, node_num=job.node_num,
        gpus_total=job.gpu_num, duration_seconds=round(duration, 3), outcome=outcome, expected_exit_code=exit_code,
        cancel_after_seconds=cancel_after, deadline_seconds=deadline,
        priority_class=priority_class(job, plan, tenant.name, pool_shape.gpus_per_node, o.short_run_s),
        task_type=task_type(job), group=job.group(by), history_state=job.state.value,
        history_run_seconds=job.duration_s, history_wait_seconds=wait,
        history_wait_scaled_seconds=None if wait is None else round(wait / o.compression, 3),
    )
    return item, floored


def _ending(job: JobRecord, run: float, cut_share: float):
    """(outcome, exit code, cancel after, deadline, pod run time) of a job run for ``run`` seconds."""
    cut = round(run, 3)
    if job.state is JobState.CANCELLED:
        return Outcome.CANCEL, None, cut, None, run / cut_share
    if job.state is JobState.TIMEOUT:
        return Outcome.DEADLINE, None, None, cut, run / cut_share
    if job.state is JobState.NODE_FAIL:
        return Outcome.FAIL, NODE_FAIL_EXIT_CODE, None, None, run
    if job.state is JobState.FAILED:
        return Outcome.FAIL, job.exit_code or DEFAULT_FAIL_EXIT_CODE, None, None, run
    return Outcome.SUCCEED, 0, None, None, run


def priority_class(job: JobRecord, plan, tenant: str, gpus_per_node: int, short_run_s: float) -> str:
    """``PRIORITY_RULE`` over the tenant's priority classes."""
    allowed = sorted(plan.tenant(tenant).priority_classes, key=plan.priority_value)
    if job.node_num > 1 or job.gpu_num >= gpus_per_node:
        return allowed[-1]
    if (job.duration_s or 0) < short_run_s:
        return allowed[0]
    return allowed[(len(allowed) - 1) // 2]


def task_type(job: JobRecord) -> str:
    """The history's type as a DNS label (``Pretrain`` -> ``pretrain``), else ``replay``."""
    slug = re.sub(r"[^a-z0-9-]+", "-", (job.type or "").lower()).strip("-")[:63]
    return slug or "replay"


def held_seconds(item: ReplayItem) -> float:
    """How long the item holds its GPUs once started: until it ends, is cancelled or hits its deadline."""
    return item.cancel_after_seconds or item.deadline_seconds or item.duration_seconds


def _shares(items: list[ReplayItem], targets: list[TenantTarget]) -> dict[str, TenantShare]:
    total = sum(i.gpus_total * held_seconds(i) for i in items) or 1.0
    out = {}
    for t in targets:
        mine = [i for i in items if i.tenant == t.name]
        events = sorted([(i.at_seconds, i.gpus_total) for i in mine]
                        + [(i.at_seconds + held_seconds(i), -i.gpus_total) for i in mine])
        held = peak = 0
        for _, delta in events:  # at equal times releases (negative) come first
            held += delta
            peak = max(peak, held)
        out[t.name] = TenantShare(target=round(t.share, 6),
                                  replayed=round(sum(i.gpus_total * held_seconds(i) for i in mine) / total, 6),
                                  items=len(mine), peak_gpus=peak, quota_gpus=t.quota_gpus)
    return out
