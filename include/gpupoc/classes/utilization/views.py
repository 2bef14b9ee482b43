"""Utilization views that support a capacity decision: by team, task type, pool, hour and GPU memory.

Input is the GPU-sample table of ``gpupoc.monitoring.collectors.collect_gpu_samples`` (one row per GPU and
step: ``timestamp, uuid, namespace, pod, util, mem_used_mib, allocated, task_type, tenant, pool``) and,
optionally, a queue-pressure table (``timestamp, namespace, pending_pods, pending_gpus``, see
``queue_pressure``). Every view carries allocated versus used GPU-hours and percentiles, never only a mean,
with the queue pressure of the same team or hour beside it.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict

VIEWS = {"team": "namespace", "task_type": "task_type", "pool": "pool", "hour": "bucket", "gpu_memory": "mem_band"}
MEM_BANDS_GIB = (0, 8, 16, 24, 48, 80)
PENDING_PODS = 'sum by (namespace) (kube_pod_status_phase{phase="Pending"})'
PENDING_GPUS = ('sum by (namespace) (kube_pod_container_resource_requests{resource="nvidia_com_gpu"} '
                '* on (namespace, pod) group_left () (kube_pod_status_phase{phase="Pending"} == 1))')


class UtilizationView(BaseModel):
    """One group of one view: GPU-hours, percentiles, and the queue pressure beside it."""

    model_config = ConfigDict(extra="forbid")

    view: str
    key: str
    gpus: int
    samples: int
    allocated_gpu_hours: float
    used_gpu_hours: float
    idle_allocated_gpu_hours: float
    used_ratio: float | None = None
    util_mean: float | None = None
    util_p50: float | None = None
    util_p90: float | None = None
    util_p95: float | None = None
    util_p99: float | None = None
    mem_p50_mib: float | None = None
    mem_p95_mib: float | None = None
    mem_max_mib: float | None = None
    pending_pods_mean: float | None = None
    pending_pods_p95: float | None = None
    pending_pods_max: float | None = None
    pending_gpus_mean: float | None = None
    pending_gpus_p95: float | None = None
    pending_gpus_max: float | None = None


def mem_band(mib: float | None) -> str:
    """The GPU-memory band a sample falls in, e.g. ``"16-24 GiB"`` (``"80+ GiB"`` above the last edge)."""
    if mib is None or pd.isna(mib):
        return "unknown"
    gib = float(mib) / 1024.0
    edges = MEM_BANDS_GIB
    for lo, hi in zip(edges, edges[1:]):
        if lo <= gib < hi:
            return f"{lo}-{hi} GiB"
    return f"{edges[-1]}+ GiB"


def _prepared(samples: pd.DataFrame, freq: str) -> pd.DataFrame:
    need = {"timestamp", "uuid", "util", "allocated"}
    missing = sorted(need - set(samples.columns))
    if missing:
        raise ValueError(f"samples: missing column(s) {missing}; pass the frame of collect_gpu_samples")
    df = samples.copy()
    df["timestamp"] = pd.to_datetime(df["timestamp"], utc=True)
    for col in ("namespace", "task_type", "pool", "tenant"):
        if col not in df.columns:
            df[col] = ""
    if "mem_used_mib" not in df.columns:
        df["mem_used_mib"] = float("nan")
    df["allocated"] = df["allocated"].astype(bool)
    df["bucket"] = df["timestamp"].dt.floor(freq).dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    df["mem_band"] = [mem_band(m) if a else "unallocated" for m, a in zip(df["mem_used_mib"], df["allocated"])]
    return df


def _q(s: pd.Series, q: float) -> float | None:
    s = s.dropna()
    return None if s.empty else round(float(s.quantile(q)), 3)


def _group_row(view: str, key: str, g: pd.DataFrame, step_s: float) -> dict:
    hours = step_s / 3600.0
    alloc = g[g["allocated"]]
    allocated_h = len(alloc) * hours
    used_h = float((alloc["util"] / 100.0).sum()) * hours
    util = alloc["util"] if view in ("team", "task_type", "gpu_memory") else g["util"]
    return {
        "view": view, "key": str(key), "gpus": int(g["uuid"].nunique()), "samples": int(len(g)),
        "allocated_gpu_hours": round(allocated_h, 6), "used_gpu_hours": round(used_h, 6),
        "idle_allocated_gpu_hours": round(allocated_h - used_h, 6),
        "used_ratio": round(used_h / allocated_h, 4) if allocated_h else None,
        "util_mean": None if util.dropna().empty else round(float(util.mean()), 3),
        "util_p50": _q(util, 0.5), "util_p90": _q(util, 0.9), "util_p95": _q(util, 0.95), "util_p99": _q(util, 0.99),
        "mem_p50_mib": _q(alloc["mem_used_mib"], 0.5), "mem_p95_mib": _q(alloc["mem_used_mib"], 0.95),
        "mem_max_mib": _q(alloc["mem_used_mib"], 1.0),
    }


def _pressure(pending: pd.DataFrame | None, freq: str) -> tuple[dict, dict]:
    """Queue-pressure stats per namespace and per time bucket (totals across namespaces per timestamp)."""
    if pending is None or pending.empty:
        return {}, {}
    p = pending.copy()
    p["timestamp"] = pd.to_datetime(p["timestamp"], utc=True)
    for col in ("pending_pods", "pending_gpus"):
        p[col] = pd.to_numeric(p.get(col, 0), errors="coerce").fillna(0.0)

    def stats(frame: pd.DataFrame) -> dict:
        out = {}
        for col in ("pending_pods", "pending_gpus"):
            out[f"{col}_mean"] = round(float(frame[col].mean()), 3)
            out[f"{col}_p95"] = _q(frame[col], 0.95)
            out[f"{col}_max"] = round(float(frame[col].max()), 3)
        return out

    by_ns = {ns: stats(g) for ns, g in p.groupby("namespace")}
    totals = p.groupby("timestamp", as_index=False)[["pending_pods", "pending_gpus"]].sum()
    totals["bucket"] = totals["timestamp"].dt.floor(freq).dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    by_bucket = {b: stats(g) for b, g in totals.groupby("bucket")}
    by_bucket["all"] = stats(totals)
    return by_ns, by_bucket


def utilization_views(samples: Any, pending: pd.DataFrame | None = None, *, step_s: float | None = None,
                      freq: str = "1h", team_column: str = "namespace") -> list[UtilizationView]:
    """All views plus an ``all`` row. ``samples``: a CollectorResult or its DataFrame; ``step_s``: the
    sampling step (taken from the result's window when not given)."""
    frame = getattr(samples, "frame", samples)
    if step_s is None:
        window = getattr(samples, "window", None)
        if window is None:
            raise ValueError("step_s: required with a bare DataFrame (the collection window's step in seconds)")
        step_s = window.step
    if frame is None or frame.empty:
        return []
    df = _prepared(frame, freq)
    by_ns, by_bucket = _pressure(pending, freq)
    rows = [{**_group_row("all", "all", df, step_s), **by_bucket.get("all", {})}]
    columns = dict(VIEWS, team=team_column)
    for view, col in columns.items():
        src = df[df["allocated"]] if view in ("team", "task_type", "gpu_memory") else df
        for key, g in src.groupby(col, sort=True):
            row = _group_row(view, key, g, step_s)
            if view == "team":
                row.update(by_ns.get(key, {}))
            elif view == "hour":
                row.update(by_bucket.get(key, {}))
            rows.append(row)
    return [UtilizationView(**r) for r in rows]


def queue_pressure(prom: Any, window: Any) -> pd.DataFrame:
    """Pending pods and pending GPU requests per namespace and step, from kube-state-metrics in Prometheus."""
    from gpupoc.monitoring.promclient import as_client

    client = as_client(prom)
    frames = []
    for col, expr in (("pending_pods", PENDING_PODS), ("pending_gpus", PENDING_GPUS)):
        series = client.query_range(expr, window.start, window.end, window.step)  # SourceUnavailable propagates
        rows = [{"timestamp": float(t), "namespace": s["metric"].get("namespace", ""), col: float(v)}
                for s in series for t, v in s["values"]]
        frames.append(pd.DataFrame(rows, columns=["timestamp", "namespace", col]))
    df = frames[0].merge(frames[1], on=["timestamp", "namespace"], how="outer").fillna(0.0)
    df["timestamp"] = pd.to_datetime(df["timestamp"], unit="s", utc=True)
    return df.sort_values(["timestamp", "namespace"]).reset_index(drop=True)


def views_frame(rows: list[UtilizationView]) -> pd.DataFrame:
    return pd.DataFrame([r.model_dump() for r in rows], columns=list(UtilizationView.model_fields))
