"""What each test class adds to the shared DAG shape: the roles it submits, its probes, its tables."""

from __future__ import annotations

from typing import Any, Callable

# Wave-item roles each class submits through the operator (the rest is done by its probes).
_ROLES = {
    "queue_congestion": ("wave",),
    "tenant_isolation": ("wave",),
    "utilization": ("wave",),
    "fault_recovery": ("wave",),  # injections are submitted and watched by inject_faults
    "audit_trail": ("wave", "artifact-producer"),  # artifact_hand_over starts the consumer once there is an artifact
}

EXPECTED_TABLES = {
    "queue_congestion": ("workload_runs", "queue_snapshots", "explanations", "platform_info"),
    "tenant_isolation": ("workload_runs", "queue_snapshots", "access_probes", "quota_samples", "platform_info"),
    "utilization": ("workload_runs", "queue_snapshots", "utilization", "platform_info"),
    "fault_recovery": ("workload_runs", "queue_snapshots", "failure_records", "alerts", "platform_info"),
    "audit_trail": ("workload_runs", "queue_snapshots", "ledger", "audit_matches", "artifacts", "platform_info"),
}


def wave_roles(test_class: str) -> tuple[str, ...]:
    return _ROLES[test_class]


def expected_tables(test_class: str) -> tuple[str, ...]:
    return EXPECTED_TABLES[test_class]


def probe_steps(test_class: str) -> list[tuple[str, Callable[[Any], dict]]]:
    """(task id, step) pairs a class runs alongside its wave, once the wave is released."""
    from gpupoc.dags import probes

    return probes.PROBES.get(test_class, [])


def collect_class(ctx, timelines, runs) -> dict:
    """Class-specific tables built at collection time; returns figures for the manifest summary."""
    if ctx.test_class == "queue_congestion":
        return _collect_congestion(ctx, timelines)
    from gpupoc.dags import probes

    fn = probes.COLLECTORS.get(ctx.test_class)
    return fn(ctx, timelines, runs) if fn else {}


def _collect_congestion(ctx, timelines) -> dict:
    """Reconstruct each wait's bottleneck and score the platform's explanation of it."""
    from gpupoc.pipeline import wave as W
    from gpupoc.pipeline.congestion import Observation, reconstruct, summarize
    from gpupoc.pipeline.observe import scheduling_event_observations
    from gpupoc.pipeline.queue_model import expected_waits
    from gpupoc.plan import class_items

    th = ctx.spec.thresholds
    nodes = ctx.read_file("nodes", []) or []
    cap = W.capacity(ctx.plan, [{"metadata": {"name": n["name"], "labels": n.get("labels") or {}},
                                 "status": {"allocatable": n.get("allocatable") or {}}} for n in nodes])
    obs = [Observation.from_dict(d) for d in ctx.read_file("observations", []) or []]
    events = scheduling_event_observations(ctx.reader(), ctx.namespaces, {t.pod for t in timelines})
    ctx.writer.write_json("scheduling_events", [e.to_dict() for e in events])
    rows = reconstruct(timelines, obs, cap, explain_after_seconds=EXPLAIN_AFTER_SECONDS,
                       eta_tolerance_seconds=th.eta_tolerance_seconds, events=events)
    durations = {i.name: ctx.plan.workload(i.workload).duration_seconds for i in class_items(ctx.plan, ctx.test_class)}
    expected = expected_waits(timelines, durations, cap.pool_gpus)
    ctx.writer.write("explanations", [{
        "pod": r.pod, "namespace": r.namespace, "tenant": r.tenant, "wait_seconds": r.wait_seconds,
        "platform_reason": r.platform_reason, "platform_message": r.platform_message,
        "reconstructed_bottleneck": r.bottleneck, "ahead_count": r.ahead_at_release,
        "explained": r.platform_explained if r.needs_explanation else None, "explained_from": r.explained_from,
        "eta_error_seconds": r.eta_error_seconds, "expected_wait_seconds": expected.get((r.namespace, r.pod)),
        "priority_class": r.priority_class, "gpus": r.gpus} for r in rows], source="pipeline reconstruction")
    summary = summarize(rows, th.max_wait_seconds)
    ctx.writer.write_json("congestion_rows", [r.to_dict() for r in rows])
    ctx.writer.write_json("congestion_summary", summary.to_dict())
    return {k: v for k, v in summary.to_dict().items() if k != "bottlenecks"} | {
        "bottlenecks": summary.bottlenecks}


# A wait shorter than this needs no explanation (a scheduler pass or two).
EXPLAIN_AFTER_SECONDS = 5.0
