"""Fault recovery: provoke each planned failure once and keep its evidence chain and the alerts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpupoc.common.timefmt import parse_time
from gpupoc.steps.probes.common import monitoring_sources, probe_manifest, waiting

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext

# What one scenario may take beyond its own timeouts: pulling up the pod, the failure, GPU release, the alert.
SCENARIO_BUDGET_SECONDS = 120.0
_SCENARIO = {"nonzero_exit": "NON_ZERO_EXIT", "missing_image": "MISSING_IMAGE", "oom": "OOM_KILL",
             "hang": "HANG_TIMEOUT", "node_failure": "NODE_FAILURE"}


def _scenario(inj):
    """The pipeline's scenario of a plan injection: a node_failure through a drain is a ``node_drain``."""
    from gpupoc.classes.fault_recovery.faults import Scenario

    if inj.kind == "node_failure" and inj.injector.method == "drain":
        return Scenario.NODE_DRAIN
    return Scenario[_SCENARIO[inj.kind]]


def _injector(ctx: RunContext, inj, admin):
    """The node injector the plan chose for ``inj`` (None for the kinds that need none)."""
    return node_injector(ctx, inj.injector, admin) if inj.kind == "node_failure" else None


def node_injector(ctx: RunContext, spec, admin=None):
    """The node injector of a plan's ``injector`` spec (sim, command, taint or drain), as the administrator."""
    from gpupoc.classes.fault_recovery.injectors import build_injector

    plan = ctx.plan
    kubeconfig = str(plan.kubeconfig_path) if plan.kubeconfig_path else None
    return build_injector(spec, admin or ctx.admin("node failure injection"), kubeconfig=kubeconfig,
                          context=plan.platform.admin_context, cwd=str(plan.base_dir))


def inject_faults(ctx: RunContext) -> dict:
    """Provoke each planned failure once and record its evidence chain (under the class's GPU lease)."""
    from gpupoc.classes.fault_recovery import faults as F
    from gpupoc.classes.fault_recovery.gpus import api_probe, prometheus_probe

    admin = ctx.admin("fault injection")
    alerts = _alert_source(ctx)
    # the API says a pod holds nothing once it ended; dcgm-exporter says whether its GPUs really came back
    probes = {"kubernetes-api": api_probe(admin)}
    src = monitoring_sources(ctx)
    if src is not None and src.prometheus:
        probes["dcgm-exporter via prometheus"] = prometheus_probe(src.prometheus_client())
    records = []
    for i, inj in enumerate(ctx.spec.injections):
        t = ctx.plan.tenant(inj.tenant)
        fctx = F.FaultContext(tenant_name=t.name, namespace=t.namespace, tenant=ctx.tenant(t.name, "fault scenario"),
                              admin=admin, gpu_probes=probes, injector=_injector(ctx, inj, admin),
                              alerts=alerts, alert_wait_s=30.0 if alerts else 0.0)
        name = f"fr-{inj.scenario.replace('_', '-')}-{i:02d}"
        kw: dict[str, Any] = {"airflow_retries": ctx.spec.airflow_retries, "name": inj.scenario}
        if inj.kind == "hang":
            kw["task_timeout_s"] = inj.timeout_seconds
        if inj.kind == "missing_image":
            kw["observe_s"] = inj.observe_seconds
        if inj.kind == "node_failure":
            kw.update(node=inj.node, run_before_fail_s=inj.at_seconds, recover_after_s=inj.recover_after_seconds,
                      fail_timeout_s=float(inj.fail_timeout_seconds))
        budget = SCENARIO_BUDGET_SECONDS + float(kw.get("task_timeout_s") or kw.get("observe_s") or 0) + float(
            (kw.get("run_before_fail_s") or 0) + (kw.get("recover_after_s") or 0) + (kw.get("fail_timeout_s") or 0))
        try:
            with waiting(ctx, f"fault scenario {i + 1} of {len(ctx.spec.injections)} ({inj.kind}): the failure, the "
                              "platform's reaction, the GPUs' release and the alert", budget):
                manifest = probe_manifest(ctx, inj.workload, t.name, name, role=f"injection.{inj.kind}")
                rec = F.run_scenario(fctx, _scenario(inj), manifest, **kw)
            records.append(rec.model_dump(mode="json"))
        except Exception as exc:  # noqa: BLE001 - one scenario's failure must not hide the others
            records.append({"scenario": inj.scenario, "tenant": t.name, "namespace": t.namespace, "pod": name,
                            "verified": False, "reason": f"{type(exc).__name__}: {exc}"})
    ctx.writer.write_json("fault_records", records)
    rows = _failure_rows(records)
    methods = sorted({inj.injector.method for inj in ctx.spec.injections if inj.kind == "node_failure"})
    ctx.writer.write("failure_records", rows, source="kubernetes-api (tenant and admin)" + (
        f" + node injector ({', '.join(methods)})" if methods else ""))
    return {"scenarios": len(rows), "verified": sum(1 for r in rows if r.verified)}


def _failure_rows(records: list[dict]) -> list:
    """The ``failure_records`` table rows: complete records through ``rows.failure_records`` (operator
    view from Warning events and alerts, recovery from what happened); a scenario that raised keeps its reason."""
    from gpupoc.classes.fault_recovery.table import FailureRecord as Row
    from gpupoc.classes.fault_recovery.rows import failure_records
    from gpupoc.classes.fault_recovery.faults import FaultRecord

    rows = []
    for r in records:
        if "trigger" in r:
            rows += failure_records([FaultRecord.model_validate(r)])
        else:
            rows.append(Row(scenario=r.get("scenario") or "?", pod=r.get("pod"), namespace=r.get("namespace"),
                            verified=False, reason=r.get("reason") or "the scenario raised before its record"))
    return rows


def _alert_source(ctx: RunContext):
    """Alerts from the webhook receiver's record, else Prometheus' ALERTS series, else none (not verified)."""
    from gpupoc.classes.fault_recovery import fault_record as FR

    src = monitoring_sources(ctx)
    if src is None:
        return None
    if src.receiver_record:
        return FR.receiver_alerts(str(ctx.plan.resolve_path(src.receiver_record)))
    return FR.prometheus_alerts(src.prometheus_client()) if src.prometheus else None


def collect_fault_recovery(ctx: RunContext, timelines, runs, _so_far=None) -> dict:
    """The ``alerts`` table: what operators were told while the failures were provoked (receiver or ALERTS)."""
    from datetime import timedelta

    from gpupoc.common.timefmt import utcnow
    from gpupoc.monitoring.results import Window
    from gpupoc.classes.fault_recovery.alert_rows import alert_records, collect_alert_history

    end = utcnow()
    start = parse_time((ctx.read_file("run_params", {}) or {}).get("started_at")) or end - timedelta(hours=1)
    try:
        from gpupoc.monitoring.sources import resolve_sources

        src = resolve_sources(plan_sources=ctx.plan.evidence_sources)
        record = str(ctx.plan.resolve_path(src.receiver_record)) if src.receiver_record else None
        prom = src.prometheus_client() if src.prometheus else None
    except Exception as exc:  # noqa: BLE001 - sources that cannot be resolved are named in the reason
        record, prom, why = None, None, f"alert sources not resolved: {exc}"
    else:
        why = ""
    result = collect_alert_history(record, prom, Window(start, end, 5.0))
    if not result.verified:
        ctx.writer.mark_not_verified("alerts", why or result.reason, result.source or "alerts")
        return {"alerts": 0, "alerts_reason": (why or result.reason)[:200]}
    nodes = {n.get("name") for n in ctx.read_file("nodes", []) or [] if n.get("name")}
    rows = alert_records(result, [t.namespace for t in ctx.plan.tenants], nodes)
    if rows:
        ctx.writer.write("alerts", rows, source=result.source)
    else:
        ctx.writer.mark_not_verified("alerts", f"{result.source} holds alerts for the window, none about the "
                                     "tenants' namespaces or the cluster's nodes", result.source)
    return {"alerts": len(rows), "alert_names": sorted({r.alertname for r in rows})}
