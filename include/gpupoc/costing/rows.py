"""From evidence frames to typed rows and back: the utilization tables' rows as ``UsageRow`` (a vGPU slice by its
share of the card), the plan's pools as ``PoolCapacity`` over the window, the window's time buckets, and an
``Allocation`` as the ``cost_allocation`` evidence table's rows."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from gpupoc.costing.allocation import IDLE, UNALLOCATED, Allocation, Bucket, PoolCapacity, UsageRow
from gpupoc.costing.prices import Prices, model_key


@dataclass(frozen=True)
class Holders:
    """Who holds what: a pool's GPU model, and which pods and namespaces are shared."""

    pool_models: dict[str, str]
    shared_namespaces: frozenset[str] = frozenset()
    serving_pods: frozenset[str] = frozenset()
    node_pools: dict[str, str] = field(default_factory=dict)

    def model_of(self, pool: str) -> str:
        """The pool's GPU model; a pool the plan does not name (a node labelled only with its product) is its own
        model, so an unknown one stays unpriced."""
        if pool in self.pool_models:
            return self.pool_models[pool]
        return next((m for m in self.pool_models.values() if model_key(m) == model_key(pool)), pool)


def _s(v: object) -> str:
    return "" if v is None or (isinstance(v, float) and v != v) else str(v)


def _row(r: dict, pool: str, h: Holders) -> UsageRow:
    team, pod = _s(r.get("namespace")) or UNALLOCATED, _s(r.get("pod"))  # no namespace: attributed to no team
    shared = team in h.shared_namespaces or pod in h.serving_pods or bool(r.get("serving") is True)
    return UsageRow(team, pod, pool, h.model_of(pool), _s(r.get("bucket")),
                    float(r.get("allocated_gpu_hours") or 0.0), float(r.get("used_gpu_hours") or 0.0),
                    _s(r.get("task_type")) or None, shared)


def usage_rows(util: pd.DataFrame, slices: pd.DataFrame | None, h: Holders) -> list[UsageRow]:
    """One row per pod, GPU and bucket; a pod HAMi slices is counted from its slices (its share of the card)."""
    sliced = set()
    out: list[UsageRow] = []
    pod_pool = {} if util.empty else {(_s(r["namespace"]), _s(r["pod"])): _s(r.get("pool"))
                                      for r in util.to_dict("records")}
    if slices is not None and not slices.empty:
        for r in slices.to_dict("records"):
            key = (_s(r.get("namespace")), _s(r.get("pod")))
            sliced.add(key)
            out.append(_row(r, pod_pool.get(key) or h.node_pools.get(_s(r.get("node")), ""), h))
    for r in ([] if util.empty else util.to_dict("records")):
        if (_s(r.get("namespace")), _s(r.get("pod"))) not in sliced:
            out.append(_row(r, _s(r.get("pool")), h))
    return out


def buckets(util: pd.DataFrame, start, end) -> list[Bucket]:
    """The time buckets that tile the window ``start``..``end``, keyed as the usage rows key them, each with the
    hours of the window it covers (a bucket no pod held included); none when the rows' buckets are not times."""
    if util.empty or "bucket" not in util:
        return []
    stamps = pd.to_datetime(util["bucket"], utc=True, errors="coerce", format="ISO8601")
    if stamps.isna().any():
        return []
    keys = {t: _s(v) for t, v in zip(stamps, util["bucket"])}  # each bucket keyed as its rows spell it
    naive = not keys or all(" " in k and "+" not in k[10:] and not k.endswith("Z") for k in keys.values())
    own = sorted(set(stamps))
    steps = [b - a for a, b in zip(own, own[1:])]
    width = min(steps) if steps else pd.Timestamp(end) - own[0]
    if width <= pd.Timedelta(0):
        return []
    lo, hi = pd.Timestamp(start), pd.Timestamp(end)
    first = own[0] - width * max(0, -(-(own[0] - lo) // width))
    out, at = [], first
    while at < hi:
        hours = (min(at + width, hi) - max(at, lo)).total_seconds() / 3600.0
        if hours > 0:
            out.append(Bucket(keys.get(at) or _s(at.tz_localize(None) if naive else at), hours))
        at += width
    return out


def capacity(pools, hours: float) -> list[PoolCapacity]:
    """Each plan pool's GPU-hours over ``hours`` of window."""
    return [PoolCapacity(p.name, p.gpu_model, p.capacity_gpus * hours) for p in pools]


def evidence_rows(alloc: Allocation, prices: Prices) -> list[dict]:
    """``alloc`` as ``cost_allocation`` rows (``gpupoc.evidence.cost_tables``)."""
    def price(model: str) -> tuple[float | None, str | None]:
        p = prices.gpu_price(model)
        return (p.per_hour, p.source) if p else (None, None)

    rows = []
    for p in alloc.pods:
        r, (rate, src) = p.row, price(p.row.gpu_model)
        rows.append({"kind": "shared" if r.shared else "workload", "team": r.team, "currency": alloc.currency,
                     "cost": round(p.gpu_cost, 6), "bucket": r.bucket, "pod": r.pod, "pool": r.pool,
                     "gpu_model": r.gpu_model, "task_type": r.task_type,
                     "requested_gpu_hours": round(r.requested_gpu_hours, 6), "used_gpu_hours": round(r.used_gpu_hours, 6),
                     "gpu_hours": round(p.gpu_hours, 6), "waste_gpu_hours": round(p.waste_gpu_hours, 6),
                     "waste_cost": round(p.waste_cost, 6), "price_per_hour": rate, "price_source": src})
    for i in alloc.idle:
        rate, src = price(i.gpu_model)
        rows.append({"kind": "idle", "team": IDLE, "currency": alloc.currency, "cost": round(i.cost, 6),
                     "bucket": i.bucket, "pool": i.pool, "gpu_model": i.gpu_model, "gpu_hours": round(i.gpu_hours, 6),
                     "price_per_hour": rate, "price_source": src})
    for team, cost in sorted(alloc.shared_by_team.items()):
        rows.append({"kind": "shared_spread", "team": team, "currency": alloc.currency, "cost": round(cost, 6),
                     "price_source": f"shared costs spread {prices.shared.rule.value}"})
    return rows
