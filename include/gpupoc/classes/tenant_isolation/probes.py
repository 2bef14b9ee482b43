"""Tenant isolation: cross-tenant attempts with each tenant's own token, over-quota submissions, usage
against quota through the run, and each tenant's share."""

from __future__ import annotations

from typing import TYPE_CHECKING

import time

from gpupoc.common.timefmt import parse_time
from gpupoc.exceptions import SourceUnavailable
from gpupoc.steps.probes.common import (
    gpu_quota_name,
    probe_manifest,
    wait_for_release,
    waiting,
)
from gpupoc.steps.wave_end import WaveEnd

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext


def isolation_probes(ctx: RunContext) -> dict:
    """Every cross-tenant attempt with each tenant's own token, then the over-quota submissions."""
    from gpupoc.classes.tenant_isolation.isolation import run_isolation_probes
    from gpupoc.pipeline.k8s import service_account_actor
    from gpupoc.classes.tenant_isolation.quotas import submit_over_quota

    wait_for_release(ctx, ctx.spec.gate_timeout_seconds)
    actors = [service_account_actor(t.kube_context, t.namespace, t.service_account) for t in ctx.plan.tenants]
    spec = ctx.spec.probes
    pairs = None if spec.pairs == "all" else [(ctx.plan.tenant(p.actor).kube_context, ctx.plan.tenant(p.target).namespace)
                                             for p in spec.pairs]
    rows = run_isolation_probes(ctx.caller, ctx.plan.platform.admin_context, actors,
                                actions=[a.value for a in spec.actions], pairs=pairs,
                                access_review=spec.access_review)
    ctx.writer.write_json("access_attempts", [r.model_dump(mode="json") for r in rows])
    admin = ctx.admin("over-quota probe: find the quota")
    results = []
    for i, oq in enumerate(ctx.spec.over_quota):
        t = ctx.plan.tenant(oq.tenant)
        res = submit_over_quota(
            ctx.tenant(t.name, "over-quota submission"), t.name, t.namespace, gpu_quota_name(admin, t.namespace),
            lambda name, gpus, _oq=oq, _t=t: probe_manifest(ctx, _oq.workload, _t.name, name, gpus, "over_quota"))
        results.append(res.model_dump(mode="json"))
    ctx.writer.write_json("over_quota", results)
    allowed = sum(1 for r in rows if r.allowed)
    return {"attempts": len(rows), "allowed": allowed, "over_quota": [r["outcome"] for r in results]}


def sample_quotas(ctx: RunContext) -> dict:
    """Usage against quota every few seconds until the wave has ended."""
    from gpupoc.classes.tenant_isolation.quotas import sample_quotas as sample
    from gpupoc.classes.tenant_isolation.table import QuotaSample

    interval = float(getattr(ctx.spec, "quota_sample_interval_seconds", 5))
    admin = ctx.caller(ctx.plan.platform.admin_context)
    tenants = {t.namespace: t.name for t in ctx.plan.tenants}
    rows: list[QuotaSample] = []
    budget = ctx.spec.gate_timeout_seconds + ctx.hold_timeout_s()
    deadline = time.monotonic() + budget
    with waiting(ctx, "the wave's end (quota usage sampled every "
                      f"{interval:.0f} s)", budget):
        _sample_until(ctx, admin, tenants, rows, interval, deadline, sample)
    ctx.writer.write("quota_samples", rows, source="kubernetes-api resourcequotas")
    return {"samples": len(rows)}


def _sample_until(ctx: RunContext, admin, tenants, rows, interval, deadline, sample) -> None:
    from gpupoc.classes.tenant_isolation.rows import sampled_quotas

    end = WaveEnd()
    while True:
        rows += sampled_quotas(sample(admin, tenants))
        if end.over(ctx) or time.monotonic() >= deadline:
            return
        time.sleep(interval)


def _attach_audit(ctx: RunContext, attempts) -> None:
    """Each access attempt's audit event from the plan's audit source (waiting for a batching or lagging
    source until every attempt is found or its catch-up time passed)."""
    from gpupoc.monitoring.audit_source import caught_up, plan_audit_source
    from gpupoc.classes.tenant_isolation.isolation import attach_audit

    source = plan_audit_source(ctx.plan)
    times = [t for t in (parse_time(a.at) for a in attempts) if t is not None]
    if source is None or not times:
        return

    def all_found(events: list[dict]) -> bool:
        trial = attach_audit([a.model_copy() for a in attempts], events)
        return all(a.audit_matched for a in trial if a.allowed is False)

    try:
        attach_audit(attempts, caught_up(source, min(times), max(times), done=all_found))
    except (OSError, SourceUnavailable):
        pass  # audit_matched stays unknown: the audit suite's checks name the missing source


def collect_isolation(ctx: RunContext, timelines, runs, _so_far=None) -> dict:
    """access_probes (with the audit record of each attempt), each tenant's share of the GPUs, and the
    memory-isolation probe's row."""
    from gpupoc.classes.tenant_isolation.isolation import AccessAttempt
    from gpupoc.classes.tenant_isolation.quotas import tenant_shares

    attempts = [AccessAttempt(**d) for d in ctx.read_file("access_attempts", []) or []]
    if attempts:
        _attach_audit(ctx, attempts)
    tenants_by_ns = {t.namespace: t.name for t in ctx.plan.tenants}
    from gpupoc.classes.tenant_isolation.quotas import OverQuotaResult
    from gpupoc.classes.tenant_isolation.rows import access_probes

    over_quota = [OverQuotaResult.model_validate(d) for d in ctx.read_file("over_quota", []) or []]
    rows = access_probes(attempts, over_quota)
    if rows:
        ctx.writer.write("access_probes", rows, source="kubernetes-api (tenant tokens) + audit log")
    else:
        ctx.writer.mark_not_verified("access_probes", "the isolation_probes task recorded no attempt; see its log",
                                     "kubernetes-api")
    shares = tenant_shares(runs, {t.name: t.quota.gpus for t in ctx.plan.tenants})
    ctx.writer.write_json("tenant_shares", [s.model_dump(mode="json") for s in shares])
    fair = write_fair_shares(ctx, timelines)
    reclaim = write_reclaim(ctx)
    from gpupoc.classes.tenant_isolation.memory_isolation import write_memory_isolation

    memory = write_memory_isolation(ctx)
    from gpupoc.classes.tenant_isolation.vgpu_slices import write_vgpu_slices

    slices = write_vgpu_slices(ctx)
    return {"attempts": len(rows), "cross_tenant_allowed": sum(1 for r in rows if r.allowed),
            "tenants": sorted(tenants_by_ns.values()), **fair, **reclaim, **memory, **slices}


def write_fair_shares(ctx: RunContext, timelines) -> dict:
    """``queue_shares``: each competing tenant's share of the pool beside its fair share (plan: fair_share)."""
    from gpupoc.classes.tenant_isolation.fair_share import Owed, share_rows
    from gpupoc.classes.queue_congestion.collector import observation_end

    fs = ctx.spec.fair_share
    if fs is None:
        return {}
    pool = ctx.plan.pool(fs.pool)
    owed = [Owed(t.tenant, t.weight, t.guaranteed_gpus) for t in fs.tenants]
    rows = share_rows(timelines, pool.name, pool.capacity_gpus, owed, observation_end(timelines, []))
    ctx.writer.write("queue_shares", rows, source="pipeline reconstruction (workload_runs)")
    return {"share_errors": {r.tenant: r.share_error for r in rows}}


def write_reclaim(ctx: RunContext) -> dict:
    """``reclaim_probes`` from the reclaim probe's result (plan: reclaim)."""
    from gpupoc.classes.tenant_isolation.reclaim import RECLAIM_FILE
    from gpupoc.classes.tenant_isolation.table import ReclaimProbeRow

    if ctx.spec.reclaim is None:
        return {}
    row = ctx.read_file(RECLAIM_FILE)
    if not row:
        ctx.writer.mark_not_verified("reclaim_probes", "the reclaim_probe task recorded no result; see its log",
                                     "kubernetes-api")
        return {"reclaimed": None}
    row = ReclaimProbeRow(**{**row, "submitted_at": parse_time(row.get("submitted_at")),
                             "placed_at": parse_time(row.get("placed_at")),
                             "borrower_submitted_at": parse_time(row.get("borrower_submitted_at"))})
    ctx.writer.write("reclaim_probes", [row], source="kubernetes-api (tenant tokens)")
    return {"reclaimed": row.reclaimed, "reclaim_seconds": row.reclaim_seconds}
