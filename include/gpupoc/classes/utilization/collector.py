"""Utilization: GPU samples from Prometheus (dcgm-exporter) per bucket, GPU and holder; on a cluster that splits
cards into vGPU slices (HAMi), each slice's grant against its use, its GPU-hours as a fraction of its card."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext


def collect_utilization(ctx: RunContext, timelines, runs, _so_far=None) -> dict:
    """GPU samples from Prometheus (dcgm-exporter) over the run, aggregated per bucket, GPU and holder."""
    try:
        from gpupoc.monitoring.collectors import collect_gpu_samples
        from gpupoc.classes.utilization.cost import write_cost
        from gpupoc.monitoring.results import Window
        from gpupoc.monitoring.sources import resolve_sources
        from gpupoc.classes.utilization.samples import (
            aggregate_utilization_samples,
            effective_bucket_seconds,
            samples_from_collector,
        )

        src = resolve_sources(plan_sources=ctx.plan.evidence_sources)
        starts = [t.submitted_at for t in timelines if t.submitted_at]
        ends = [t.finished_at for t in timelines if t.finished_at]
        if not starts or not getattr(src, "prometheus", None):
            raise RuntimeError("no Prometheus configured (evidence_sources.prometheus_url or `gpupoc stack up`)"
                               if starts else "the wave left no timeline to sample")
        window = Window(min(starts), max(ends or starts))
        result = collect_gpu_samples(src.prometheus, window)
        frame = getattr(result, "frame", None)
        if frame is None or frame.empty:
            raise RuntimeError(getattr(result, "reason", "") or "Prometheus returned no GPU samples for the window")
        step = result.window.step if getattr(result, "window", None) else 15.0
        samples = samples_from_collector(frame, step)
        if samples.empty:
            raise RuntimeError(f"Prometheus answered {len(frame)} GPU sample(s) but none of a GPU held by a pod "
                               "(no pod/exported_pod label on DCGM_FI_DEV_GPU_UTIL): is dcgm-exporter's pod "
                               "attribution (kubelet pod-resources) enabled?")
        seconds = effective_bucket_seconds((window.end - window.start).total_seconds(), ctx.spec.bucket_seconds, step)
        agg = aggregate_utilization_samples(samples, bucket=f"{seconds}s")
        agg["tenant"] = agg["namespace"].map({t.namespace: t.name for t in ctx.plan.tenants})
        task_types = {r["pod"]: r["task_type"] for r in runs if r.get("pod")}
        agg["task_type"] = [tt if isinstance(tt, str) and tt else task_types.get(p)
                            for tt, p in zip(agg["task_type"], agg["pod"])]
        agg["serving"] = agg["pod"].isin(serving_pods(ctx))
        ctx.writer.write("utilization", agg.to_dict("records"), source="prometheus (dcgm-exporter)")
        kept: dict = {}
        slices = write_vgpu_utilization(ctx, src.prometheus, window, seconds, task_types, kept)
        cost = write_cost(ctx, agg, kept.get("rows"), window, set(agg.loc[agg["serving"], "pod"]))
        return {"utilization_rows": len(agg), "bucket_seconds": seconds, **slices, **cost}
    except Exception as exc:  # noqa: BLE001 - a missing source is "not verified", with the reason
        ctx.writer.mark_not_verified("utilization", f"GPU samples not collected: {exc}", "prometheus")
        ctx.writer.mark_not_verified("cost_allocation", f"no GPU-hours to price: {exc}", "prometheus")
        return {"utilization_rows": 0, "utilization_reason": str(exc)[:200]}


def serving_pods(ctx: RunContext) -> set[str]:
    """The pods of the class's online services the observer saw (``steps.service_observer``)."""
    from gpupoc.steps.service_observer import REPLICAS_FILE

    return {r["pod"]["metadata"]["name"] for r in ctx.read_file(REPLICAS_FILE, []) or []}


def write_vgpu_utilization(ctx: RunContext, prometheus, window, bucket_seconds: int, task_types: dict,
                           kept: dict | None = None) -> dict:
    """``vgpu_utilization`` from HAMi's slice series (``gpupoc.monitoring.slices``); nothing where Prometheus has
    none (no vGPU slices), not verified where it could not be asked. ``kept["rows"]``: the rows written."""
    from gpupoc.monitoring.slices import SERIES, collect_slice_samples, slice_rows

    try:
        samples = collect_slice_samples(prometheus, window)
    except Exception as exc:  # noqa: BLE001 - the slices' view is not verified, with the reason
        ctx.writer.mark_not_verified("vgpu_utilization", f"vGPU slice samples not collected: {exc}", "prometheus")
        return {"vgpu_slices": None}
    if samples.empty:
        return {"vgpu_slices": 0}
    rows = slice_rows(samples, window.step, f"{bucket_seconds}s")
    rows["tenant"] = rows["namespace"].map({t.namespace: t.name for t in ctx.plan.tenants})
    rows["task_type"] = rows["pod"].map(task_types)
    ctx.writer.write("vgpu_utilization", rows.to_dict("records"), source=f"prometheus (HAMi: {SERIES})")
    if kept is not None:
        kept["rows"] = rows
    return {"vgpu_slices": int(rows[["namespace", "pod", "gpu_uuid"]].drop_duplicates().shape[0]),
            "slice_gpu_hours": round(float(rows["allocated_gpu_hours"].sum()), 4)}
