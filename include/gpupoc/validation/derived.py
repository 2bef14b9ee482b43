"""Tables derived from evidence before validation: small aggregates GX can check quickly.

Large series are aggregated before they are written (the utilization class's
``classes/utilization/samples.py`` ``aggregate_utilization_samples``), so GX validates thousands of rows
instead of millions; the report states that the aggregated tables were validated.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from gpupoc.common.priority import gangs_placed_whole, priority_within_queue
from gpupoc.evidence.reader import RunEvidence


# Pairs of workloads compared at once by ``priority_order`` (a few MiB of masks, whatever the wave's size).
PAIRS_PER_BLOCK = 1 << 20


def _ts(s: pd.Series) -> pd.Series:
    return pd.to_datetime(s, utc=True, errors="coerce")


def _secs(ts: pd.Series) -> np.ndarray:
    """Seconds since the epoch as floats (NaN where missing), whatever the timestamp unit."""
    return ((ts - pd.Timestamp(0, tz="UTC")).dt.total_seconds()).to_numpy(dtype=float)


# How long after a workload reached the scheduler a lower-priority one that reached it first may still be bound
# without having overtaken it: kube-scheduler pops a pod, assumes it and binds it asynchronously, so one popped
# just before the higher one arrived is bound after; on a loaded API server that bind answered up to 1.1 s
# after the higher one's release, stamped in whole seconds.
IN_FLIGHT_SECONDS = 2.0


def priority_order(ev: RunEvidence, tolerance_seconds: float = 1.0,
                   in_flight_seconds: float = IN_FLIGHT_SECONDS) -> pd.DataFrame:
    """Per workload: how many lower-priority workloads of the same pool, asking at least as many GPUs, were
    scheduled while it was already waiting (``overtaken_by_lower``; 0 when the policy honours priority).
    Under a queue scheduler (Kueue, Volcano, KAI) only workloads of the same tenant's queue are compared
    (between queues, quota and fair share decide first: :mod:`gpupoc.common.priority`), and only one that
    reached the queue later counts: such a scheduler admits a pod when it is created, gated or not, so
    arrival is the pod's creation, and a lower-priority workload that arrived first may hold quota first.
    Those schedulers place a gang whole, so a gang's pod asks the whole gang's GPUs and arrives with its last
    pod: a smaller lower-priority workload placed in a gap the gang cannot use is backfill. A lower-priority
    workload that reached the scheduler first and was bound within ``in_flight_seconds`` of the waiting one's
    arrival was already in the scheduler's hands (``IN_FLIGHT_SECONDS``)."""
    runs = ev.load("workload_runs")
    cols = ["pod", "priority_class", "priority", "gpus", "pool", "wait_seconds", "overtaken_by_lower"]
    if runs.empty:
        return pd.DataFrame(columns=cols)
    adapter = _adapter(ev)
    within_queue = priority_within_queue(adapter)
    arrival = "submitted_at" if within_queue else "released_at"
    ready = _ts(runs[arrival]) if arrival in runs else _ts(runs["submitted_at"])
    if "submitted_at" in runs:
        ready = ready.fillna(_ts(runs["submitted_at"]))
    sched = _secs(_ts(runs["scheduled_at"]))
    has_sched = ~np.isnan(sched)
    # never scheduled: it waited until its attempt ended (preempted or deleted while queued), else to the end
    ended = _secs(_ts(runs["outcome_at"])) if "outcome_at" in runs else np.full(len(runs), np.nan)
    sched_h = np.where(has_sched, sched, np.where(np.isnan(ended), np.inf, ended))
    ready_i = np.nan_to_num(_secs(ready), nan=np.inf)
    prio = pd.to_numeric(runs["priority"], errors="coerce").fillna(0).to_numpy()
    gpus = pd.to_numeric(runs["gpus"], errors="coerce").fillna(0).to_numpy()
    if gangs_placed_whole(adapter, _platform_info(ev, "gangs")):
        gpus, ready_i = _as_gangs(runs, gpus, ready_i)
    pool = runs["pool"].astype(str)
    if within_queue and "tenant" in runs:
        pool = pool + "/" + runs["tenant"].astype(str)
    pool = pool.to_numpy()
    tol = tolerance_seconds
    over = np.zeros(len(runs), dtype=int)
    for p in np.unique(pool):
        idx = np.flatnonzero(pool == p)
        step = max(1, PAIRS_PER_BLOCK // len(idx))  # a pool of 10,000 is 10^8 pairs: a block of rows at a time
        for first in range(0, len(idx), step):
            h, l_ = idx[first:first + step, None], idx[None, :]  # rows: the waiting workload, cols: an overtaker
            m = ((prio[l_] < prio[h]) & (gpus[l_] >= gpus[h]) & has_sched[l_]
                 & (sched[l_] < sched_h[h] - tol) & (sched[l_] >= ready_i[h])
                 & ~((ready_i[l_] < ready_i[h]) & (sched[l_] <= ready_i[h] + in_flight_seconds)))
            if within_queue:
                m &= ready_i[l_] > ready_i[h] + tol  # it reached the queue after the waiting one
            over[h[:, 0]] = m.sum(axis=1)
    out = runs.reindex(columns=cols[:-1]).copy()
    out["overtaken_by_lower"] = over
    return out


def _as_gangs(runs: pd.DataFrame, gpus: np.ndarray, ready: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A gang's pods as the gang a gang scheduler sees: each asks the GPUs of its ``min_available`` pods at
    once, and the gang arrives when its last pod of the same attempt exists."""
    if "gang" not in runs or "gang_min_available" not in runs:
        return gpus, ready
    size = pd.to_numeric(runs["gang_min_available"], errors="coerce")
    in_gang = (runs["gang"].notna() & size.notna()).to_numpy()
    if not in_gang.any():
        return gpus, ready
    demand = np.where(in_gang, gpus * size.fillna(1).to_numpy(), gpus)
    attempt = runs["attempt"].astype(str) if "attempt" in runs else pd.Series("1", index=runs.index)
    key = runs["gang"].astype(str) + "#" + attempt
    arrived = pd.Series(ready, index=runs.index).groupby(key).transform("max").to_numpy()
    return demand, np.where(in_gang, arrived, ready)


def _adapter(ev: RunEvidence) -> str:
    """The plan's scheduler adapter as the run recorded it in ``platform_info`` ("" when not recorded)."""
    return _platform_info(ev, "adapter")


def _platform_info(ev: RunEvidence, key: str) -> str:
    """One ``platform_info`` value the run recorded ("" when not recorded)."""
    info = ev.load("platform_info")
    if info.empty or "key" not in info:
        return ""
    hit = info.loc[info["key"] == key, "value"]
    return str(hit.iloc[0]) if len(hit) else ""


def tenant_share(ev: RunEvidence) -> pd.DataFrame:
    """Per pool where two or more tenants ran (they competed for its GPUs), per tenant: GPU-seconds held
    during the run and its share of that pool's total. A tenant alone in its pool competed with nobody."""
    cols = ["pool", "tenant", "gpu_seconds", "share"]
    runs = ev.load("workload_runs")
    if runs.empty:
        return pd.DataFrame(columns=cols)
    start, end = _ts(runs["started_at"]), _ts(runs["finished_at"])
    held = (end - start).dt.total_seconds().clip(lower=0).fillna(0) * pd.to_numeric(runs["gpus"], errors="coerce")
    pool = runs["pool"].fillna("") if "pool" in runs else pd.Series("", index=runs.index)
    df = pd.DataFrame({"pool": pool, "tenant": runs["tenant"], "gpu_seconds": held})
    df = df.groupby(["pool", "tenant"], as_index=False).sum()
    df = df[df.groupby("pool")["tenant"].transform("nunique") >= 2].copy()
    totals = df.groupby("pool")["gpu_seconds"].transform("sum")
    df["share"] = (df["gpu_seconds"] / totals).where(totals > 0, 0.0)
    return df.reindex(columns=cols).reset_index(drop=True)


DERIVED: dict[str, Callable[[RunEvidence], pd.DataFrame]] = {
    "priority_order": priority_order,
    "tenant_share": tenant_share,
}

