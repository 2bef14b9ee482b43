"""Typed rows of the window's cost (``gpupoc.costing``): each pod's priced GPU-hours per bucket, each pool's idle
GPU-hours, and each team's part of the shared costs, in the plan's currency with each price's source."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CostAllocationRow:
    """One priced line. ``kind``: workload (a pod's hold), shared (a shared pod's hold, spread over the teams),
    shared_spread (a team's part of the shared costs), idle (a pool's GPU-hours no pod held)."""

    kind: str
    team: str                                   # namespace; "__idle__" for idle rows
    currency: str
    cost: float                                 # gpu_hours x price_per_hour (shared_spread: the team's part)
    bucket: str | None = None
    pod: str | None = None
    pool: str | None = None
    gpu_model: str | None = None
    task_type: str | None = None
    requested_gpu_hours: float | None = None
    used_gpu_hours: float | None = None
    gpu_hours: float | None = None              # max(requested, used): OpenCost's workload measure
    waste_gpu_hours: float | None = None        # requested and not used
    waste_cost: float | None = None
    price_per_hour: float | None = None
    price_source: str | None = None


COST_TABLES: dict[str, type] = {"cost_allocation": CostAllocationRow}
