"""The ``utilization`` table's rows from GPU samples: per time bucket, pod and GPU, used against allocated."""

from __future__ import annotations

import pandas as pd

from gpupoc.classes.utilization import table as t


def utilization_rows(samples: pd.DataFrame, step_s: float, freq: str = "1h") -> list[t.UtilizationRow]:
    """Per time bucket, pod and GPU: mean and p95 utilization, mean memory, allocated and used GPU-hours."""
    if samples is None or samples.empty:
        return []
    df = samples[samples["allocated"].astype(bool)].copy()
    if df.empty:
        return []
    df["bucket"] = pd.to_datetime(df["timestamp"], utc=True).dt.floor(freq)
    for col in ("namespace", "pod", "tenant", "task_type", "pool", "hostname"):
        if col not in df.columns:
            df[col] = ""
    hours = step_s / 3600.0
    out = []
    keys = ["bucket", "namespace", "pod", "tenant", "task_type", "pool", "hostname", "uuid"]
    for k, g in df.groupby(keys, sort=True, dropna=False):
        rec = dict(zip(keys, k))
        out.append(t.UtilizationRow(
            bucket=rec["bucket"].to_pydatetime(), namespace=rec["namespace"] or None, pod=rec["pod"] or None,
            tenant=rec["tenant"] or None, task_type=rec["task_type"] or None, pool=rec["pool"] or None,
            node=rec["hostname"] or None, gpu_uuid=rec["uuid"] or None, util_avg=round(float(g["util"].mean()), 3),
            util_p95=round(float(g["util"].quantile(0.95)), 3),
            mem_mib_avg=None if "mem_used_mib" not in g or g["mem_used_mib"].isna().all()
            else round(float(g["mem_used_mib"].mean()), 3),
            allocated_gpu_hours=round(len(g) * hours, 6), used_gpu_hours=round(float(g["util"].sum()) / 100 * hours, 6),
            samples=int(len(g))))
    return out