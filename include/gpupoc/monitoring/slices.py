"""vGPU slices from Prometheus: what HAMi's scheduler granted each container's slice of a card (memory, cores)
against what its vGPU monitor saw the container use, step by step; and each slice's GPU-hours counted as the
fraction of the card it holds.

Series (Project-HAMi/HAMi v2.9 names): the scheduler's ``hami_vgpu_memory_allocated_bytes`` and
``hami_vgpu_core_allocated_ratio`` (labels ``namespace, node, pod, container_index, device_uuid``; every pod it
counts, so a slice it kept after its pod ended shows as allocated and unused) and ``hami_gpu_memory_limit_bytes``
per card (``cmd/scheduler/metrics.go``); the vGPU monitor's ``hami_vgpu_memory_used_bytes`` and
``hami_container_device_utilization_ratio`` (labels ``namespace, pod, container, vdevice_index, device_uuid``;
``cmd/vGPUmonitor/metrics.go``).

A slice's share of its card is the larger of its memory share (granted MiB over the card's) and its core share
(``gpucores`` over 100): HAMi reserves both on the card, and whichever is larger is what the slice keeps from other
pods. A slice that asked no cores (HAMi then sets no SM limit) counts its memory share; one that asked the whole
card counts 1. Its used GPU-hours are its utilization of the card's SMs; a slice without a core limit may use more
than its share.
"""

from __future__ import annotations

import pandas as pd

from gpupoc.monitoring.labels import pick
from gpupoc.monitoring.promclient import PrometheusClient, as_client
from gpupoc.monitoring.results import Window

MIB = 1024 * 1024
ALLOC_MEM = "hami_vgpu_memory_allocated_bytes"
ALLOC_CORES = "hami_vgpu_core_allocated_ratio"
USED_MEM = "hami_vgpu_memory_used_bytes"
UTIL = "hami_container_device_utilization_ratio"
CARD_MEM = "hami_gpu_memory_limit_bytes"
SERIES = f"{ALLOC_MEM}; {ALLOC_CORES}; {USED_MEM}; {UTIL}; {CARD_MEM}"
KEY = ["timestamp", "namespace", "pod", "gpu_uuid"]
SAMPLE_COLUMNS = [*KEY, "container_index", "node", "card_mib", "mem_allocated_mib", "cores_allocated",
                  "mem_used_mib", "util"]
ROW_KEYS = ["bucket", "namespace", "pod", "container_index", "gpu_uuid"]


def _frame(series: list[dict], value: str, scale: float = 1.0, keys: tuple[str, ...] = ()) -> pd.DataFrame:
    rows = []
    for s in series:
        m = s["metric"]
        labels = {"namespace": pick(m, "namespace"), "pod": pick(m, "pod"), "gpu_uuid": m.get("device_uuid", "")}
        labels.update({k: pick(m, k) for k in keys})
        rows += [{"timestamp": float(t), **labels, value: float(v) / scale} for t, v in s["values"]]
    return pd.DataFrame(rows, columns=["timestamp", "namespace", "pod", "gpu_uuid", *keys, value])


def collect_slice_samples(prom: PrometheusClient | str, window: Window) -> pd.DataFrame:
    """One row per slice and step (``SAMPLE_COLUMNS``); empty when Prometheus has no HAMi slice for the window
    (a cluster without HAMi). ``SourceUnavailable`` propagates."""
    client = as_client(prom)

    def rng(expr: str) -> list[dict]:
        return client.query_range(expr, window.start, window.end, window.step)

    alloc = _frame(rng(ALLOC_MEM), "mem_allocated_mib", MIB, ("container_index", "node"))
    if alloc.empty:
        return pd.DataFrame(columns=SAMPLE_COLUMNS)
    df = alloc.merge(_frame(rng(ALLOC_CORES), "cores_allocated", 1.0, ("container_index",)),
                     on=[*KEY, "container_index"], how="left")
    for expr, col, scale in ((USED_MEM, "mem_used_mib", MIB), (UTIL, "util", 1.0)):
        used = _frame(rng(expr), col, scale).groupby(KEY, as_index=False)[col].sum()
        df = df.merge(used, on=KEY, how="left")
    cards = _frame(rng(CARD_MEM), "card_mib", MIB).drop(columns=["namespace", "pod"]).drop_duplicates(
        ["timestamp", "gpu_uuid"])
    df = df.merge(cards, on=["timestamp", "gpu_uuid"], how="left")
    df["timestamp"] = pd.to_datetime(df["timestamp"], unit="s", utc=True)
    return df[SAMPLE_COLUMNS].sort_values(KEY, kind="stable").reset_index(drop=True)


def share_of(mem_mib: pd.Series, card_mib: pd.Series, cores: pd.Series) -> pd.Series:
    """The fraction of its card a slice holds: the larger of its memory share and its core share."""
    mem = (mem_mib / card_mib.where(card_mib > 0)).clip(upper=1.0)
    core = (cores.fillna(0.0) / 100.0).clip(upper=1.0)
    share = pd.concat([mem, core], axis=1).max(axis=1, skipna=True)
    return share.where(mem.notna() | (core > 0))  # no card memory and no cores: unknown, not nothing


def slice_rows(samples: pd.DataFrame, step_s: float, bucket: str) -> pd.DataFrame:
    """Per time bucket and slice: granted against used (memory, cores) and GPU-hours as fractions of the card
    (the ``vgpu_utilization`` rows, without tenant and task type)."""
    if samples.empty:
        return pd.DataFrame(columns=[*ROW_KEYS, "node"])
    hours = step_s / 3600.0
    df = samples.assign(bucket=pd.to_datetime(samples["timestamp"], utc=True).dt.floor(bucket),
                        share=share_of(samples["mem_allocated_mib"], samples["card_mib"], samples["cores_allocated"]),
                        used=samples["util"].fillna(0.0).clip(lower=0.0) / 100.0)
    g = df.groupby(ROW_KEYS, sort=True)
    out = g.agg(node=("node", "first"), card_mib=("card_mib", "max"), mem_allocated_mib=("mem_allocated_mib", "max"),
                mem_used_mib_avg=("mem_used_mib", "mean"), mem_used_mib_max=("mem_used_mib", "max"),
                cores_allocated=("cores_allocated", "max"), util_avg=("util", "mean"), share=("share", "max"),
                samples=("share", "size"), allocated=("share", "sum"), used_sum=("used", "sum")).reset_index()
    out["allocated_gpu_hours"] = (out.pop("allocated") * hours).round(6)
    out["used_gpu_hours"] = (out.pop("used_sum") * hours).round(6)
    out["share"] = out["share"].round(4)
    return out
