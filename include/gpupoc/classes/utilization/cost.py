"""Cost: the utilization class's GPU-hours priced by the plan's ``prices:`` (``gpupoc.costing``), written as the
``cost_allocation`` table and a showback CSV per team (``files/showback-<team>.csv``, OpenCost's allocation
columns) that the manifest hashes. Without prices, or with a GPU model the prices lack, the table is not verified,
naming what is missing; no price is invented."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from gpupoc.costing.allocation import allocate
from gpupoc.costing.rows import Holders, buckets, capacity, evidence_rows, usage_rows
from gpupoc.costing.showback import showback, to_csv

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext

SOURCE = "plan prices x utilization (OpenCost allocation)"


def holders(plan, serving: set[str]) -> Holders:
    pools = {p.name: p.gpu_model for p in plan.pools}
    nodes = {n: p.name for p in plan.pools for n in p.node_names}
    shared = plan.prices.shared if plan.prices else None
    return Holders(pools, frozenset(shared.namespaces if shared else ()),
                   frozenset(serving if shared is None or shared.serving else ()), nodes)


def write_cost(ctx: RunContext, util: pd.DataFrame, slices: pd.DataFrame | None, window, serving: set[str]) -> dict:
    """Price the window's GPU-hours; the XCom summary: total, idle and waste cost, or why not verified. A failure
    here leaves the utilization tables as written and the cost not verified, with the reason."""
    try:
        return _price(ctx, util, slices, window, serving)
    except Exception as exc:  # noqa: BLE001 - the cost is not verified, the GPU-hours stay collected
        reason = f"cost not computed: {exc}"[:300]
        ctx.writer.mark_not_verified("cost_allocation", reason, SOURCE)
        return {"cost_reason": reason}


def _price(ctx: RunContext, util: pd.DataFrame, slices: pd.DataFrame | None, window, serving: set[str]) -> dict:
    prices = ctx.plan.prices
    if prices is None:
        reason = "the plan has no prices: add a prices: section with a price per GPU model (docs/plan.md#prices)"
        ctx.writer.mark_not_verified("cost_allocation", reason, "plan")
        return {"cost_reason": reason}
    hours = (window.end - window.start).total_seconds() / 3600.0
    alloc = allocate(usage_rows(util, slices, holders(ctx.plan, serving)), capacity(ctx.plan.pools, hours), prices,
                     buckets(util, window.start, window.end))
    if alloc.unpriced:
        reason = (f"no price for GPU model(s) {', '.join(alloc.unpriced)}: add each under prices.gpu_hour "
                  "(keyed by the node's nvidia.com/gpu.product)")
        ctx.writer.mark_not_verified("cost_allocation", reason, "plan")
        return {"cost_reason": reason}
    ctx.writer.write("cost_allocation", evidence_rows(alloc, prices), source=SOURCE)
    rows = showback(alloc, window.start.isoformat(), window.end.isoformat(), hours * 60)
    for r in rows:
        ctx.writer.write_csv(f"showback-{r['name'].strip('_')}", to_csv([r]))
    return {"cost_total": round(alloc.total_cost, 2), "cost_idle": round(alloc.idle_cost, 2),
            "cost_waste": round(alloc.waste_cost, 2), "currency": alloc.currency}
