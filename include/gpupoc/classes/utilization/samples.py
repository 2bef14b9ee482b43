"""The utilization class's GPU samples: the monitoring collector's frame as the aggregator's input, the bucket a
run's window allows, and the aggregate that is the ``utilization`` table (one row per bucket, GPU and holder).
Large series are aggregated here, before they are written, so GX validates thousands of rows instead of millions."""

from __future__ import annotations

import pandas as pd


MIN_BUCKETS = 4


def effective_bucket_seconds(window_seconds: float, planned_seconds: float, step_seconds: float) -> int:
    """The plan's bucket, shortened when the run's window would fit in fewer than ``MIN_BUCKETS`` of them
    (never below the sampling step): a view over time of one bucket would depend on where the clock's
    bucket boundaries fell, not on what the platform did."""
    fit = int(window_seconds // MIN_BUCKETS)
    if fit >= planned_seconds:
        return int(planned_seconds)
    return int(max(step_seconds, fit, 1))


def aggregate_utilization_samples(samples: pd.DataFrame, bucket: str = "1h") -> pd.DataFrame:
    """Raw per-GPU samples (ts, gpu_uuid, namespace, pod, task_type, pool, node, util, mem_mib, step_seconds)
    -> the ``utilization`` evidence table (one row per bucket, GPU and holder)."""
    keys = ["bucket", "namespace", "pod", "task_type", "pool", "node", "gpu_uuid"]
    df = samples
    step = float(df["step_seconds"].iloc[0]) if "step_seconds" in df and len(df) else 15.0
    b = pd.to_datetime(df["ts"], utc=True).dt.floor(bucket)
    work = pd.DataFrame({k: df[k] for k in keys[1:] if k in df})
    work["bucket"] = b
    work["util"] = df["util"].astype("float32")
    work["mem"] = df["mem_mib"].astype("float32")
    g = work.groupby([k for k in keys if k in work], observed=True, sort=False)
    out = g.agg(util_avg=("util", "mean"), mem_mib_avg=("mem", "mean"), n=("util", "size"),
                used=("util", "sum"))
    out["samples"] = out["n"]
    out.insert(1, "util_p95", g["util"].quantile(0.95))
    out = out.reset_index()
    out["allocated_gpu_hours"] = out["n"] * step / 3600.0
    out["used_gpu_hours"] = out["used"] / 100.0 * step / 3600.0
    return out.drop(columns=["n", "used"])


# the monitoring collector's column (gpupoc.monitoring.collectors.SAMPLE_COLUMNS) -> the aggregator's input column
COLLECTOR_TO_SAMPLES = {"timestamp": "ts", "uuid": "gpu_uuid", "hostname": "node", "mem_used_mib": "mem_mib",
                        "namespace": "namespace", "pod": "pod", "task_type": "task_type", "pool": "pool",
                        "util": "util"}


def samples_from_collector(frame: pd.DataFrame, step_seconds: float) -> pd.DataFrame:
    """The frame of ``gpupoc.monitoring.collectors.collect_gpu_samples`` (timestamp, uuid, hostname, util,
    mem_used_mib, allocated, ...) as the input of :func:`aggregate_utilization_samples` (ts, gpu_uuid, node, util,
    mem_mib, step_seconds, ...). Only samples of GPUs held by a pod are kept: a free GPU's time is not allocated
    GPU-hours. Raises ``KeyError`` naming the missing columns if the collector's frame changes shape."""
    missing = sorted({*COLLECTOR_TO_SAMPLES, "allocated"} - set(frame.columns))
    if missing:
        raise KeyError(f"GPU samples frame lacks column(s) {missing}; has {list(frame.columns)}")
    held = frame[frame["allocated"].astype(bool)]
    out = held[list(COLLECTOR_TO_SAMPLES)].rename(columns=COLLECTOR_TO_SAMPLES).reset_index(drop=True)
    out["step_seconds"] = float(step_seconds)
    return out
