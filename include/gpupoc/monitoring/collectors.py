"""GPU utilization and memory from Prometheus (dcgm-exporter and kube-state-metrics series), as DataFrames.

``collect_gpu_samples`` reads every GPU's utilization and framebuffer use over a window and tags each sample
with namespace, pod, task type, tenant, queue and pool; ``utilization_by`` aggregates it by any of those and
by time bucket, with allocated and used GPU-hours. Each returns a :class:`CollectorResult`.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from gpupoc.exceptions import SourceUnavailable
from gpupoc.monitoring.labels import normalize, pick
from gpupoc.monitoring.promclient import PrometheusClient, as_client
from gpupoc.monitoring.results import CollectorResult, Window

UTIL_METRIC = "DCGM_FI_DEV_GPU_UTIL"
MEM_METRIC = "DCGM_FI_DEV_FB_USED"
GPU_COLUMNS = ("uuid", "gpu", "hostname", "model_name", "namespace", "pod", "container")
POD_TAGS = ("task_type", "tenant", "queue", "test_class", "run_id")  # from kube_pod_labels
SAMPLE_COLUMNS = ["timestamp", *GPU_COLUMNS, "util", "mem_used_mib", "allocated", *POD_TAGS, "pool"]
POD_KEYED = {"namespace", "pod", "container", *POD_TAGS}
UNKNOWN = "unknown"


def _expand(series: list[dict], value_column: str, rows_for: Callable[[dict], dict]) -> pd.DataFrame:
    """One row per sample of every series. ``rows_for(metric)`` gives the series' label columns, computed once
    per series and spread over its samples (a week of 15 s samples is 40,000 rows a series)."""
    ts_parts, val_parts, idx_parts, rows = [], [], [], []
    for s in series:
        values = s["values"]
        if not values:
            continue
        n = len(values)
        ts_parts.append(np.fromiter((v[0] for v in values), float, count=n))
        val_parts.append(np.array([v[1] for v in values], dtype=float))
        idx_parts.append(np.full(n, len(rows), dtype=np.int64))
        rows.append(rows_for(s["metric"]))
    if not rows:
        return pd.DataFrame()
    idx = np.concatenate(idx_parts)
    data: dict = {"timestamp": np.concatenate(ts_parts)}
    for col in rows[0]:
        if col == "allocated":
            data[col] = np.array([r[col] for r in rows], dtype=bool)[idx]
        else:  # low-cardinality labels: categorical (codes per sample, each string stored once)
            codes, uniques = pd.factorize(np.array([r[col] for r in rows], dtype=object))
            data[col] = pd.Categorical.from_codes(codes[idx], categories=pd.Index(uniques, dtype=object))
    data[value_column] = np.concatenate(val_parts)
    return pd.DataFrame(data)


def _pod_tags(prom: PrometheusClient, window: Window) -> dict[tuple[str, str], dict[str, str]]:
    """Task type, tenant, queue, test class and run id per (namespace, pod) from ``kube_pod_labels``."""
    try:
        sets = prom.series("kube_pod_labels", window.start, window.end)
    except SourceUnavailable:
        sets = []
    return {(pick(m, "namespace"), pick(m, "pod")): {t: pick(m, t) for t in POD_TAGS} for m in sets}


def _node_pools(prom: PrometheusClient, window: Window) -> dict[str, str]:
    """Node -> pool from ``kube_node_labels`` (label gpupoc.io/pool, else the GPU product label)."""
    try:
        sets = prom.series("kube_node_labels", window.start, window.end)
    except SourceUnavailable:
        return {}
    return {pick(m, "node"): pick(m, "pool") or pick(m, "gpu_product") for m in sets if pick(m, "node")}


def collect_gpu_samples(prom: PrometheusClient | str, window: Window,
                        pool_map: Mapping[str, str] | None = None) -> CollectorResult:
    """One row per GPU and step: utilization (%), memory used (MiB) and who held the GPU.

    ``pool_map`` maps a hostname or a modelName to a pool; otherwise node labels decide, else the model name.
    """
    name = "gpu_samples"
    try:
        client = as_client(prom)
        util = client.query_range(UTIL_METRIC, window.start, window.end, window.step)
        mem = client.query_range(MEM_METRIC, window.start, window.end, window.step)
    except SourceUnavailable as exc:
        return CollectorResult.unverified(name, exc.endpoint, window, f"{exc.reason} (fix: {exc.fix})",
                                          UTIL_METRIC, SAMPLE_COLUMNS)
    tags, pools, mapping = _pod_tags(client, window), _node_pools(client, window), dict(pool_map or {})

    def labels(metric: dict) -> dict:
        row = normalize(metric, GPU_COLUMNS)
        row["allocated"] = allocated = row["pod"] != ""
        found = tags.get((row["namespace"], row["pod"]), {})
        for t in POD_TAGS:
            row[t] = (found.get(t) or UNKNOWN) if allocated else ""
        h, m = row["hostname"], row["model_name"]
        row["pool"] = mapping.get(h) or mapping.get(m) or pools.get(h) or m
        return row

    df = _expand(util, "util", labels)
    if df.empty:
        return CollectorResult.unverified(
            name, client.url, window, f"Prometheus answered no {UTIL_METRIC} samples for {window}: is "
            "dcgm-exporter scraped (query up{job=\"dcgm-exporter\"}) and was the window right?",
            UTIL_METRIC, SAMPLE_COLUMNS)
    mem_df = _expand(mem, "mem_used_mib", lambda m: {"uuid": pick(m, "uuid")})
    if mem_df.empty:
        df["mem_used_mib"] = np.nan
    else:
        mem_df["uuid"] = mem_df["uuid"].cat.set_categories(df["uuid"].cat.categories)
        df = df.merge(mem_df.drop_duplicates(["timestamp", "uuid"]), on=["timestamp", "uuid"], how="left")
    df["timestamp"] = pd.to_datetime(df["timestamp"], unit="s", utc=True)
    df = df.sort_values(["timestamp", "hostname", "gpu"], kind="stable").reset_index(drop=True)
    return CollectorResult(name, client.url, window, df[SAMPLE_COLUMNS], True, "",
                           f"{UTIL_METRIC}; {MEM_METRIC}; kube_pod_labels; kube_node_labels")


def _aggregate(df: pd.DataFrame, keys: list[str], step: float) -> pd.DataFrame:
    hours = step / 3600.0
    d = df.assign(_used=df["util"] / 100.0 * df["allocated"], _alloc=df["allocated"].astype(int),
                  _alloc_util=df["util"].where(df["allocated"]),
                  _alloc_mem=df["mem_used_mib"].where(df["allocated"]))
    g = d.groupby(keys, dropna=False, sort=True, observed=True)
    out = pd.DataFrame({
        "gpus": g["uuid"].nunique(),
        "samples": g.size(),
        "allocated_samples": g["_alloc"].sum(),
        "util_mean_allocated": g["_alloc_util"].mean(),
        "util_mean_all": g["util"].mean(),
        "util_p95_allocated": g["_alloc_util"].quantile(0.95),
        "mem_used_mib_mean": g["_alloc_mem"].mean(),
        "mem_used_mib_max": g["_alloc_mem"].max(),
        "allocated_gpu_hours": g["_alloc"].sum() * hours,
        "used_gpu_hours": g["_used"].sum() * hours,
    }).reset_index()
    for k in keys:  # group keys as plain strings, ordered lexically (not by category order)
        if isinstance(out[k].dtype, pd.CategoricalDtype):
            out[k] = out[k].astype(str)
    out = out.sort_values(keys, kind="stable").reset_index(drop=True)
    out["idle_allocated_gpu_hours"] = out["allocated_gpu_hours"] - out["used_gpu_hours"]
    out["used_ratio"] = (out["used_gpu_hours"] / out["allocated_gpu_hours"]).where(out["allocated_gpu_hours"] > 0)
    return out


def utilization_by(samples: CollectorResult, by: Sequence[str], freq: str | None = None) -> CollectorResult:
    """Aggregate GPU samples by columns (namespace, pod, task_type, tenant, queue, test_class, run_id, pool,
    hostname, model_name) and optionally by time bucket ``freq`` (pandas offset, e.g. ``"1h"``, column ``bucket``).

    Pod-keyed groupings (namespace, pod and the pod tags) use allocated GPUs only; the others all GPUs.
    """
    keys = list(by)
    bad = [k for k in keys if k not in SAMPLE_COLUMNS]
    if bad:
        raise ValueError(f"by: unknown column(s) {bad}; use some of {SAMPLE_COLUMNS[1:]}")
    name = "utilization_by_" + "_".join(keys + (["bucket"] if freq else []))
    df = samples.frame
    if not samples.verified or df.empty:
        return samples.derive(name, pd.DataFrame())
    if POD_KEYED & set(keys):
        df = df[df["allocated"]]
    if freq:
        df = df.assign(bucket=df["timestamp"].dt.floor(freq))
        keys = ["bucket", *keys]
    step = samples.window.step if samples.window else 15.0
    out = _aggregate(df, keys, step) if not df.empty else pd.DataFrame()
    result = samples.derive(name, out, f"no allocated GPU samples in {samples.window} from {samples.source}")
    if result.verified and "task_type" in keys and set(out["task_type"]) <= {UNKNOWN}:
        result.verified = False
        result.reason = ("kube_pod_labels carries no label_gpupoc_io_task_type for the window's pods: label pods "
                         "gpupoc.io/task-type and allow the label in kube-state-metrics --metric-labels-allowlist")
    return result


Source = CollectorResult | PrometheusClient | str  # GPU samples already collected, or where to collect them


def _samples(src: Source, window: Window | None, pool_map: Mapping[str, str] | None = None) -> CollectorResult:
    if isinstance(src, CollectorResult):
        return src
    if window is None:
        raise ValueError("window: required when collecting from Prometheus directly; pass a Window")
    return collect_gpu_samples(src, window, pool_map)


def utilization_by_namespace(src: Source, window: Window | None = None) -> CollectorResult:
    """Per namespace (team): mean utilization and memory of its allocated GPUs, GPU-hours."""
    return utilization_by(_samples(src, window), ["namespace"])


def utilization_by_pod(src: Source, window: Window | None = None) -> CollectorResult:
    """Per pod: utilization, memory and GPU-hours of its GPUs."""
    return utilization_by(_samples(src, window), ["namespace", "pod"])


def utilization_by_task_type(src: Source, window: Window | None = None) -> CollectorResult:
    """Per task type (pod label gpupoc.io/task-type); not verified when no pod carries it."""
    return utilization_by(_samples(src, window), ["task_type"])


def utilization_by_pool(src: Source, window: Window | None = None,
                        pool_map: Mapping[str, str] | None = None) -> CollectorResult:
    """Per pool, over all its GPUs (free ones too): cluster utilization and allocation."""
    return utilization_by(_samples(src, window, pool_map), ["pool"])


def utilization_by_bucket(src: Source, window: Window | None = None, freq: str = "1h",
                          by: Sequence[str] = ("namespace",)) -> CollectorResult:
    """Per time bucket (``freq``, e.g. ``"1h"``) and ``by`` columns."""
    return utilization_by(_samples(src, window), list(by), freq=freq)


def gpu_hours_by_namespace(src: Source, window: Window | None = None) -> CollectorResult:
    """Allocated versus used GPU-hours per namespace (used = utilization-weighted allocated time)."""
    res = utilization_by_namespace(src, window)
    cols = ["namespace", "allocated_gpu_hours", "used_gpu_hours", "idle_allocated_gpu_hours", "used_ratio"]
    return res.derive("gpu_hours_by_namespace", res.frame[cols] if not res.frame.empty else res.frame)
