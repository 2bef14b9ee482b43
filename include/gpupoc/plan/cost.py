"""What a daily run of the plan costs the cluster: GPU-hours each class asks for, how long it holds its pools,
and how much of each pool it asks for at once (``gpupoc plan cost``).

From the plan alone: a pod holds its GPUs for its workload's ``duration_seconds`` (a replayed pod for its
history's time). A class's duration is at least its longest pod and at least the time its pools need to run
every GPU-second it asks for; at most its deadlines (the gate's hold, the longest acceptable wait, the longest
pod, every resubmission the plan allows). Classes of one ``gpu_group`` run one after the other, so a day's run
takes their sum. Probes' own pods (over-quota, reclaim, artifact, injections) count as the class's items do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from gpupoc.plan.classes import TestClass
from gpupoc.plan.overrides import item_workload, planned_seconds
from gpupoc.plan.replay import replay_span_seconds
from gpupoc.plan.waves import class_items


@dataclass
class ClassCost:
    test_class: str
    pods: int
    gpu_hours: float
    shortest_seconds: float
    longest_seconds: float
    peak_share: dict[str, float] = field(default_factory=dict)  # pool -> GPUs asked at once / pool capacity

    def to_dict(self) -> dict:
        return {"test_class": self.test_class, "pods": self.pods, "gpu_hours": round(self.gpu_hours, 2),
                "shortest_seconds": round(self.shortest_seconds), "longest_seconds": round(self.longest_seconds),
                "peak_share": {k: round(v, 2) for k, v in self.peak_share.items()}}


def class_cost(plan, tc: TestClass) -> ClassCost:
    items = class_items(plan, tc)
    spec = plan.test_class(tc)
    gpu_seconds: dict[str, float] = {}
    asked: dict[str, int] = {}
    longest_pod = 0.0
    for item in items:
        w = item_workload(plan, item)
        secs = planned_seconds(plan, item)
        longest_pod = max(longest_pod, secs)
        gpu_seconds[w.pool] = gpu_seconds.get(w.pool, 0.0) + w.gpus * secs
        asked[w.pool] = asked.get(w.pool, 0) + w.gpus
    for entry in spec.services:  # the class's online services hold their replicas' GPUs throughout
        w = plan.workload(entry.workload)
        asked[w.pool] = asked.get(w.pool, 0) + (entry.replicas or w.replicas) * w.gpus
    capacity = {p.name: p.capacity_gpus for p in plan.pools}
    drain = max((gs / capacity[pool] for pool, gs in gpu_seconds.items()), default=0.0)
    span = replay_span_seconds(plan, tc)
    again = spec.resubmission.limit * (spec.resubmission.wait_seconds + longest_pod)
    longest = spec.gate_timeout_seconds + span + plan.longest_acceptable_wait_seconds() + longest_pod + again
    return ClassCost(tc.value, len(items), sum(gpu_seconds.values()) / 3600, max(longest_pod, drain, span),
                     longest, {pool: n / capacity[pool] for pool, n in sorted(asked.items())})


@dataclass
class PlanCost:
    classes: list[ClassCost]
    runs: int  # scheduled runs in the window
    groups: dict[str, list[str]]  # gpu_group -> its classes (run one after the other)

    @property
    def daily_gpu_hours(self) -> float:
        return sum(c.gpu_hours for c in self.classes)

    def daily_seconds(self, bound: str) -> float:
        """The longest group's sum of its classes' ``shortest_seconds`` or ``longest_seconds``."""
        by = {c.test_class: getattr(c, f"{bound}_seconds") for c in self.classes}
        return max((sum(by[c] for c in classes) for classes in self.groups.values()), default=0.0)

    def to_dict(self) -> dict:
        return {"classes": [c.to_dict() for c in self.classes], "runs_in_window": self.runs,
                "per_run": {"gpu_hours": round(self.daily_gpu_hours, 2),
                            "shortest_seconds": round(self.daily_seconds("shortest")),
                            "longest_seconds": round(self.daily_seconds("longest"))},
                "window": {"gpu_hours": round(self.daily_gpu_hours * self.runs, 2)}}


def scheduled_runs(plan) -> int:
    """How many times the window's schedule fires between its start and end (presets and cron)."""
    w = plan.window
    start, end = w.aware(w.start), w.aware(w.end)
    every = {"@hourly": timedelta(hours=1), "@daily": timedelta(days=1), "@midnight": timedelta(days=1),
             "@weekly": timedelta(weeks=1)}.get(w.schedule)
    if every is not None:
        return max(1, int((end - start) / every))
    if w.schedule == "@once":
        return 1
    try:
        from croniter import croniter
    except ImportError:  # pragma: no cover - croniter ships with Airflow
        return 1
    it, n = croniter(w.schedule, start), 0
    while it.get_next(type(start)) <= end and n < 100_000:
        n += 1
    return max(1, n)


def plan_cost(plan) -> PlanCost:
    enabled = [tc for tc in TestClass if plan.test_class(tc).enabled]
    groups: dict[str, list[str]] = {}
    for tc in enabled:
        groups.setdefault(plan.test_class(tc).gpu_group, []).append(tc.value)
    return PlanCost([class_cost(plan, tc) for tc in enabled], scheduled_runs(plan), groups)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def cost_lines(plan) -> list[str]:
    cost = plan_cost(plan)
    capacity = ", ".join(f"{p.name} {p.capacity_gpus} GPUs" for p in plan.pools)
    out = [f"plan {plan.name!r} on {capacity}: one run of every class"]
    for c in cost.classes:
        shares = ", ".join(f"{pool} {share:.0%}" for pool, share in c.peak_share.items())
        out.append(f"  {c.test_class}: {c.pods} pods, {c.gpu_hours:.2f} GPU-hours, {_minutes(c.shortest_seconds)} "
                   f"to {_minutes(c.longest_seconds)}; asks at once {shares or 'no GPUs'}")
    out.append(f"  per run: {cost.daily_gpu_hours:.2f} GPU-hours, {_minutes(cost.daily_seconds('shortest'))} to "
               f"{_minutes(cost.daily_seconds('longest'))} (classes of one gpu_group run one after the other)")
    out.append(f"  window: {cost.runs} run(s) on {plan.window.schedule}, "
               f"{cost.daily_gpu_hours * cost.runs:.1f} GPU-hours")
    return out
