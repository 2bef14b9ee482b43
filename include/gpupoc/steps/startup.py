"""The wave's start-up latency and scheduling pace as evidence (``startup_latency``), for either path.

A bulk wave's shards watched every pod update (``steps.shard_files.transitions``); a wave the operator submitted has
only each pod's last state (the observer's and the final list), so its rows say ``last-state``.
"""

from __future__ import annotations

from gpupoc.pipeline.pod_transitions import PodTransitions, latency_rows, scheduling_throughput
from gpupoc.pipeline.startup_phases import phase_rows
from gpupoc.pipeline.wave import item_key
from gpupoc.steps.bulk import in_bulk
from gpupoc.steps.context import RunContext
from gpupoc.steps.shard_files import transitions

SOURCE = "kubernetes-api"


def wave_transitions(ctx: RunContext, pods: list[dict]) -> tuple[list[PodTransitions], str]:
    """Each wave pod's transitions and where they come from (``watch`` or ``last-state``)."""
    watched = transitions(ctx.writer.files_dir)
    if watched:
        return [PodTransitions.from_dict(d) for d in watched], "watch"
    keys = {i["workload_key"] for i in ctx.items}
    seen = {**ctx.observed_pods(), **{(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}}
    out = []
    for (ns, name), pod in seen.items():
        if item_key(pod) in keys:
            t = PodTransitions(ns, name, item_key(pod))
            t.observe(pod)
            out.append(t)
    return out, "last-state"


def startup_rows(ctx: RunContext, pods: list[dict]) -> tuple[list[dict], list[dict], dict]:
    """``startup_latency`` rows, ``startup_phases`` rows and a summary (p50/p95/p99 of Ready, the start-up
    SLO's p99, pods per second) for the manifest."""
    found, source = wave_transitions(ctx, pods)
    keys = {i["workload_key"] for i in ctx.items}
    wave = [p for p in found if p.item in keys] or found
    phases = [{"test_class": ctx.test_class, "wave": "wave", **r.to_dict(), "source": source, "run_id": ctx.run_id}
              for r in phase_rows(wave)]
    pace = scheduling_throughput(found)
    mode = "bulk" if in_bulk(ctx) else "operator"
    rows = [{**r, "source": source, "pods_scheduled": pace["pods_scheduled"],
             "placing_seconds": pace["span_seconds"], "pods_per_second": pace["pods_per_second"],
             "submission": mode, "run_id": ctx.run_id} for r in latency_rows(found, ctx.test_class)]
    ready = next(r for r in rows if r["condition"] == "Ready")
    summary = {"submission": mode, "startup_source": source, "ready_p50_ms": ready["p50_ms"],
               "ready_p95_ms": ready["p95_ms"], "ready_p99_ms": ready["p99_ms"],
               "scheduling_pods_per_second": pace["pods_per_second"],
               "startup_p99_ms": next(r["p99_ms"] for r in phases if r["phase"] == "startup")}
    return rows, phases, summary
