"""Allocation as OpenCost computes it (https://www.opencost.io/docs/specification), over typed rows.

- A workload's cost is max(requested, used) resource-hours times the resource's hourly price ("Workload Costs");
  a vGPU slice requests the fraction of its card it holds.
- Cluster idle cost is what the pools' GPUs cost minus what workloads were charged ("Idle Costs"), per pool and,
  where the window's time buckets are known, per bucket (so the cost over the window shows when cards sat idle).
- Waste (OpenCost's workload idle) is what a workload requested and did not use, priced.
- Shared workloads' costs are spread over the other teams uniformly or in proportion to their own cost
  ("Shared Costs").

A GPU model with no price is never priced: the rows on it are left out of every sum and named in ``unpriced``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from gpupoc.costing.prices import Prices, SharedRule

IDLE = "__idle__"  # OpenCost's name for the idle allocation
UNALLOCATED = "__unallocated__"  # OpenCost's name for what no namespace holds: GPU-hours attributed to no team


@dataclass(frozen=True)
class UsageRow:
    """One pod's hold of GPU capacity in one time bucket (a whole card, or a slice's share of one)."""

    team: str
    pod: str
    pool: str
    gpu_model: str
    bucket: str
    requested_gpu_hours: float
    used_gpu_hours: float
    task_type: str | None = None
    shared: bool = False


@dataclass(frozen=True)
class PoolCapacity:
    """The GPU-hours a pool's cards offered over the window."""

    pool: str
    gpu_model: str
    gpu_hours: float


@dataclass(frozen=True)
class PodCost:
    """A priced ``UsageRow``: the GPU-hours charged (max of requested and used), their cost, the waste."""

    row: UsageRow
    gpu_hours: float
    gpu_cost: float
    waste_gpu_hours: float
    waste_cost: float


@dataclass(frozen=True)
class Bucket:
    """One time bucket of the window: its key as the usage rows carry it, and the hours of the window it covers."""

    label: str
    hours: float


@dataclass(frozen=True)
class IdleCost:
    """A pool's GPU-hours no workload held (in one bucket, or over the window when ``bucket`` is None), and their
    cost."""

    pool: str
    gpu_model: str
    gpu_hours: float
    cost: float
    bucket: str | None = None


@dataclass
class Allocation:
    """The window's cost: per pod row, idle per pool, shared cost per team, and what could not be priced."""

    currency: str
    pods: list[PodCost] = field(default_factory=list)
    idle: list[IdleCost] = field(default_factory=list)
    shared_by_team: dict[str, float] = field(default_factory=dict)
    unpriced: list[str] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return not self.unpriced

    @property
    def workload_cost(self) -> float:
        return sum(p.gpu_cost for p in self.pods)

    @property
    def idle_cost(self) -> float:
        return sum(i.cost for i in self.idle)

    @property
    def waste_cost(self) -> float:
        return sum(p.waste_cost for p in self.pods)

    @property
    def total_cost(self) -> float:
        """Workload costs plus cluster idle costs: what the pools' cards cost over the window."""
        return self.workload_cost + self.idle_cost


def charged_hours(requested: float, used: float) -> float:
    """OpenCost's workload measure for a resource with allocation costs: max(request, usage)."""
    return max(float(requested or 0.0), float(used or 0.0))


def price_rows(rows: list[UsageRow], prices: Prices) -> tuple[list[PodCost], list[str]]:
    """Each row priced by its GPU model; the models with no price (their rows left out)."""
    out: list[PodCost] = []
    for r in rows:
        price = prices.gpu_price(r.gpu_model)
        if price is None:
            continue
        hours = charged_hours(r.requested_gpu_hours, r.used_gpu_hours)
        waste = max(float(r.requested_gpu_hours or 0.0) - float(r.used_gpu_hours or 0.0), 0.0)
        out.append(PodCost(r, hours, hours * price.per_hour, waste, waste * price.per_hour))
    return out, prices.unpriced([r.gpu_model for r in rows])


def idle_costs(capacity: list[PoolCapacity], pods: list[PodCost], prices: Prices,
               buckets: list[Bucket] | None = None) -> list[IdleCost]:
    """Per pool (and per bucket, each offering its share of the pool's GPU-hours): its GPU-hours minus those
    charged to workloads (never below zero), at its model's price."""
    total = sum(b.hours for b in buckets or [])
    spans = [(b.label, b.hours / total) for b in buckets or []] if total > 0 else [(None, 1.0)]
    held: dict[tuple[str, str | None], float] = defaultdict(float)
    for p in pods:
        held[(p.row.pool, p.row.bucket if total > 0 else None)] += p.gpu_hours
    out = []
    for c in capacity:
        price = prices.gpu_price(c.gpu_model)
        if price is None:
            continue
        for label, share in spans:
            hours = max(c.gpu_hours * share - held[(c.pool, label)], 0.0)
            out.append(IdleCost(c.pool, c.gpu_model, hours, hours * price.per_hour, label))
    return out


def spread_shared(total: float, team_costs: dict[str, float], rule: SharedRule) -> dict[str, float]:
    """``total`` spread over the teams: uniformly, or in proportion to each team's own cost (uniformly when
    no team has any)."""
    teams = sorted(team_costs)
    if not teams or not total:
        return {t: 0.0 for t in teams}
    base = sum(team_costs.values())
    if rule is SharedRule.EVEN or base <= 0:
        return {t: total / len(teams) for t in teams}
    return {t: total * team_costs[t] / base for t in teams}


def team_costs(pods: list[PodCost], shared: bool = False) -> dict[str, float]:
    """The GPU cost per team of the rows that are (or are not) shared."""
    out: dict[str, float] = defaultdict(float)
    for p in pods:
        if p.row.shared == shared:
            out[p.row.team] += p.gpu_cost
    return dict(out)


def allocate(rows: list[UsageRow], capacity: list[PoolCapacity], prices: Prices,
             buckets: list[Bucket] | None = None) -> Allocation:
    """The window's allocation: pods priced, idle per pool (per bucket when ``buckets`` tile the window), shared
    costs spread by the plan's rule."""
    pods, unpriced = price_rows(rows, prices)
    unpriced = sorted(set(unpriced) | set(prices.unpriced([c.gpu_model for c in capacity])))
    own = team_costs(pods)
    for t in {r.team for r in rows if not r.shared}:
        own.setdefault(t, 0.0)
    shared_total = sum(team_costs(pods, shared=True).values())
    return Allocation(prices.currency, pods, idle_costs(capacity, pods, prices, buckets),
                      spread_shared(shared_total, own, prices.shared.rule), unpriced)


def idle_percent(idle_cost: float, allocation_cost: float) -> float | None:
    """OpenCost's cluster idle %: idle cost over the resource allocation costs (None when there are none)."""
    return idle_cost / allocation_cost if allocation_cost > 0 else None


def normalize_to_asset(asset_cost: float, base_prices: dict[str, float]) -> dict[str, float]:
    """OpenCost's Appendix A: scale base resource prices so they sum to the asset's price, keeping their ratio."""
    total = sum(base_prices.values())
    if total <= 0:
        raise ValueError("base_prices: expected at least one positive price to scale")
    return {k: v * asset_cost / total for k, v in base_prices.items()}
