"""The steps of a replayed class (a wave taken from a job history): its release follows the history's arrival
times, and its evidence sets the platform's waits beside the history's own and answers the capacity question.

``release_schedule`` stands in for the all-at-once release of ``gpupoc.steps.wave.release_gate``;
``collect_replay`` runs after every class's own collector and writes ``replay_waits`` (one row per replayed
job) and ``replay_capacity`` (the waits measured, in the history and in the queue model with today's GPUs and
with the what-if factor).
"""

from __future__ import annotations

from gpupoc.common.timefmt import parse_time, rfc3339
from gpupoc.pipeline import replay_compare as RC
from gpupoc.pipeline import replay_release as RR
from gpupoc.pipeline import waits
from gpupoc.plan.replay import replay_spec, replay_wave
from gpupoc.steps.context import RunContext
from gpupoc.steps.markers import RELEASE_FILE

REPLAY_TABLES = ("replay_waits", "replay_capacity")


def is_replay(ctx: RunContext) -> bool:
    return replay_spec(ctx.plan, ctx.test_class) is not None


def release_schedule(ctx: RunContext, observer_ready: bool) -> dict:
    """Lift each item's gate at its arrival offset after the whole wave exists; a cancelled job of the history
    is deleted by its tenant. The release file is written when the schedule starts (the wave counts as released
    for resubmissions from then) and after every release."""
    items = ctx.wave_items()
    ns = {t.name: t.namespace for t in ctx.plan.tenants}
    schedule = RR.schedule_of(items, ns.__getitem__)
    tenant_of = {i.name: i.tenant for i in items}
    earlier = ctx.read_file(RELEASE_FILE, {}) or {}
    extra = {"observer_ready": observer_ready, "replay": True}

    def write(rel, complete: bool) -> None:
        ctx.writer.write_json(RELEASE_FILE, {**rel.to_dict(), **extra, "complete": complete})

    def started(at) -> None:
        if not earlier.get("schedule_started_at"):
            ctx.writer.write_json(RELEASE_FILE, {"schedule_started_at": rfc3339(at), "rows": [], **extra,
                                                 "complete": False})

    def cancel(s: RR.Scheduled, pod: dict) -> str | None:
        name = pod["metadata"]["name"]
        r = ctx.tenant(tenant_of[s.item], "cancel a replayed job (cancelled in the history)").call(
            "DELETE", f"/api/v1/namespaces/{s.namespace}/pods/{name}", body={})
        return None if r.ok or r.status == 404 else f"HTTP {r.status}: {r.message}"

    def waiting(missing: list[str], left_s: float) -> None:
        waits.write_note(ctx.run_dir, "release_gate", f"{len(missing)} of {len(schedule)} replayed pods to be "
                         f"created ({', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''})", left_s)

    span = max((s.at_seconds for s in schedule), default=0.0)
    try:
        rel = RR.release_schedule(
            ctx.admin("release the replayed wave on its schedule"), ctx.namespaces, ctx.selector, schedule,
            timeout_s=ctx.spec.gate_timeout_seconds, run_s=span + ctx.hold_timeout_s(),
            started_at=parse_time(earlier.get("schedule_started_at")),
            refused=lambda: {s.item for s in ctx.submissions() if s.rejection is not None}, cancel=cancel,
            on_waiting=waiting, on_started=started, on_progress=lambda r: write(r, False))
    finally:
        waits.clear_note(ctx.run_dir, "release_gate")
    mine = {c["pod"] for c in rel.cancelled}  # a rerun keeps the cancels of the try before it
    rel.cancelled = [c for c in earlier.get("cancelled") or [] if c.get("pod") not in mine] + rel.cancelled
    write(rel, True)
    return {"found": rel.found, "missing": rel.missing, "schedule_seconds": span,
            "max_release_lag_seconds": rel.max_release_lag_seconds, "cancelled": len(rel.cancelled),
            "unfinished": rel.unfinished, "errors": rel.errors[:5], "observer_ready": observer_ready}


def collect_replay(ctx: RunContext, runs: list[dict]) -> dict:
    """``replay_waits`` and ``replay_capacity`` from the run's attempts and the replay's plan."""
    spec = replay_spec(ctx.plan, ctx.test_class)
    wave = replay_wave(ctx.plan, ctx.test_class)
    jobs = RC.jobs_of(ctx.plan, ctx.wave_items())
    release = ctx.read_file(RELEASE_FILE, {}) or {}
    pools = {p.name: p.capacity_gpus for p in ctx.plan.pools}
    rows = RC.job_waits(jobs, runs, parse_time(release.get("schedule_started_at")), pools)
    source = f"replay of {wave.source.get('path', spec.file)} (sha256 {str(wave.source.get('sha256', ''))[:12]})"
    ctx.writer.write("replay_waits", rows, source=source)
    capacity = RC.capacity(jobs, rows, pools, spec.what_if_factor, spec.compress)
    ctx.writer.write("replay_capacity", [c.to_dict() for c in capacity], source="pipeline (queue model)")
    ctx.writer.write_json("replay_wave", {
        "file": spec.file, "format": spec.format, "source": wave.source, "compression": wave.compression,
        "selection": wave.selection.model_dump(), "jobs_in_window": wave.jobs_in_window,
        "jobs_replayed": wave.jobs_replayed, "dropped": wave.dropped, "floored_durations": wave.floored_durations,
        "pods": len(ctx.wave_items()), "tenant_mapping": [m.model_dump() for m in wave.tenant_mapping],
        "what_if_factor": spec.what_if_factor, "span_seconds": wave.span_seconds, "model": RC.MODEL_NOTE})
    by = {c.scenario: c for c in capacity}
    return {"replay_jobs": wave.jobs_replayed, "replay_dropped": sum(wave.dropped.values()),
            "replay_compression": wave.compression,
            "replay_platform_wait_p50": by["platform"].wait_p50_seconds,
            "replay_history_wait_p50": by["history"].wait_p50_seconds,
            "replay_max_release_lag_seconds": release.get("max_release_lag_seconds")}
