"""Class-specific probes run alongside the wave, and the collectors that turn them into evidence tables.

Each probe is ``step(ctx) -> dict`` (a small summary for XCom); what it observed goes to the run's
``files/`` or tables. They run while the class holds the cluster lease (``gpupoc.dags.lease``).
"""

from __future__ import annotations

import time
from typing import Any

from gpupoc.dags.markers import RELEASE_FILE
from gpupoc.pipeline import wave as W
from gpupoc.pipeline.common import parse_time

GPU_QUOTA_KEY = "requests.nvidia.com/gpu"


def _wave_ended(ctx) -> bool:
    pods = W.latest_per_item(W.list_pods(ctx.factory.caller(ctx.plan.platform.admin_context), ctx.namespaces,
                                         ctx.selector))
    return len(pods) >= len(ctx.items) and all((p.get("status") or {}).get("phase") in W.TERMINAL
                                               for p in pods.values())


def _wait_released(ctx, timeout_s: float, poll_s: float = 2.0) -> bool:
    """Until the release task has lifted the gate (release.json written), so probes see the wave running."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ctx.files(RELEASE_FILE).is_file():
            return True
        time.sleep(poll_s)
    return False


def _gpu_quota_name(admin, namespace: str) -> str:
    r = admin.call("GET", f"/api/v1/namespaces/{namespace}/resourcequotas")
    for q in (r.body or {}).get("items") or [] if r.ok else []:
        if GPU_QUOTA_KEY in ((q.get("spec") or {}).get("hard") or {}):
            return q["metadata"]["name"]
    return f"{namespace}-gpu"


def _manifest(ctx, workload: str, tenant: str, name: str, gpus: int | None = None, role: str = "probe") -> dict:
    """A plain pod manifest from the plan's pod builder (no wave gate: probes submit and watch directly)."""
    from kubernetes.client import ApiClient

    from gpupoc.podspec.build import build_pod

    pod = build_pod(ctx.plan.workload(workload), ctx.plan.tenant(tenant), ctx.plan, run_id=ctx.run_id,
                    test_class=ctx.test_class, wave_gate=False, name=name, role=role)
    body = ApiClient().sanitize_for_serialization(pod)
    if gpus is not None:
        res = body["spec"]["containers"][0].setdefault("resources", {})
        for k in ("requests", "limits"):
            res.setdefault(k, {})["nvidia.com/gpu"] = str(gpus)
    return body


# ---- tenant isolation ----
def isolation_probes(ctx) -> dict:
    """Every cross-tenant attempt with each tenant's own token, then the over-quota submissions."""
    from gpupoc.pipeline.isolation import run_isolation_probes
    from gpupoc.pipeline.k8s import service_account_actor
    from gpupoc.pipeline.quotas import submit_over_quota

    _wait_released(ctx, ctx.spec.gate_timeout_seconds)
    actors = [service_account_actor(t.kube_context, t.namespace, t.service_account) for t in ctx.plan.tenants]
    rows = run_isolation_probes(ctx.factory.caller, ctx.plan.platform.admin_context, actors)
    ctx.writer.write_json("access_attempts", [r.model_dump(mode="json") for r in rows])
    admin = ctx.admin("over-quota probe: find the quota")
    results = []
    for i, oq in enumerate(ctx.spec.over_quota):
        t = ctx.plan.tenant(oq.tenant)
        res = submit_over_quota(
            ctx.tenant(t.name, "over-quota submission"), t.name, t.namespace, _gpu_quota_name(admin, t.namespace),
            lambda name, gpus, _oq=oq, _t=t: _manifest(ctx, _oq.workload, _t.name, name, gpus, "over_quota"))
        results.append(res.model_dump(mode="json"))
    ctx.writer.write_json("over_quota", results)
    allowed = sum(1 for r in rows if r.allowed)
    return {"attempts": len(rows), "allowed": allowed, "over_quota": [r["outcome"] for r in results]}


def sample_quotas(ctx) -> dict:
    """Usage against quota every few seconds until the wave has ended."""
    from gpupoc.pipeline.quotas import sample_quotas as sample

    interval = float(getattr(ctx.spec, "quota_sample_interval_seconds", 5))
    admin = ctx.factory.caller(ctx.plan.platform.admin_context)
    tenants = {t.namespace: t.name for t in ctx.plan.tenants}
    rows: list[dict] = []
    deadline = time.monotonic() + ctx.spec.gate_timeout_seconds + ctx.hold_timeout_s()
    while True:
        for s in sample(admin, list(tenants)):
            rows.append({"ts": parse_time(s.at), "tenant": tenants.get(s.namespace, s.namespace),
                         "namespace": s.namespace, "resource": GPU_QUOTA_KEY, "hard": s.hard_gpus, "used": s.used_gpus,
                         "quota": s.quota, "source": "resourcequota status"})
        if _wave_ended(ctx) or time.monotonic() >= deadline:
            break
        time.sleep(interval)
    ctx.writer.write("quota_samples", rows, source="kubernetes-api resourcequotas")
    return {"samples": len(rows)}


def collect_isolation(ctx, timelines, runs) -> dict:
    """access_probes (with the audit record of each attempt) and each tenant's share of the GPUs."""
    from gpupoc.pipeline.isolation import AccessAttempt, attach_audit
    from gpupoc.pipeline.quotas import tenant_shares

    attempts = [AccessAttempt(**d) for d in ctx.read_file("access_attempts", []) or []]
    audit_path = ctx.plan.evidence_sources.audit_log_path
    if attempts and audit_path:
        from gpupoc.pipeline.audit import read_audit_lines

        try:
            attach_audit(attempts, read_audit_lines(ctx.plan.resolve_path(audit_path)))
        except OSError:
            pass
    tenants_by_ns = {t.namespace: t.name for t in ctx.plan.tenants}
    rows = [{"actor_tenant": a.actor, "target_namespace": a.target_namespace, "action": a.action,
             "resource": a.resource, "verb": a.verb, "subresource": a.subresource or None, "name": a.name or None,
             "at": parse_time(a.at), "http_status": a.http_status, "allowed": a.allowed,
             "expected_allowed": a.expected == "allowed", "access_review_allowed": a.sar_allowed,
             "message": a.message, "audit_matched": a.audit_matched} for a in attempts]
    from dataclasses import asdict

    from gpupoc.pipeline import evidence_rows
    from gpupoc.pipeline.quotas import OverQuotaResult

    over_quota = [OverQuotaResult.model_validate(d) for d in ctx.read_file("over_quota", []) or []]
    rows += [{**asdict(r), "at": parse_time(r.at)} for r in evidence_rows.access_probes([], over_quota)]
    if rows:
        ctx.writer.write("access_probes", rows, source="kubernetes-api (tenant tokens) + audit log")
    else:
        ctx.writer.mark_not_verified("access_probes", "the isolation_probes task recorded no attempt; see its log",
                                     "kubernetes-api")
    shares = tenant_shares(runs, {t.name: t.quota.gpus for t in ctx.plan.tenants})
    ctx.writer.write_json("tenant_shares", [s.model_dump(mode="json") for s in shares])
    return {"attempts": len(rows), "cross_tenant_allowed": sum(1 for r in rows if r["allowed"]),
            "tenants": sorted(tenants_by_ns.values())}


# ---- fault recovery ----
_SCENARIO = {"nonzero_exit": "NON_ZERO_EXIT", "missing_image": "MISSING_IMAGE", "oom": "OOM_KILL",
             "hang": "HANG_TIMEOUT", "node_failure": "NODE_FAILURE"}


def inject_faults(ctx) -> dict:
    """Provoke each planned failure once and record its evidence chain (under the class's cluster lease)."""
    from gpupoc.pipeline import faults as F
    from gpupoc.pipeline.gpus import api_probe

    admin = ctx.admin("fault injection")
    alerts = _alert_source(ctx)
    records = []
    for i, inj in enumerate(ctx.spec.injections):
        t = ctx.plan.tenant(inj.tenant)
        fctx = F.FaultContext(tenant_name=t.name, namespace=t.namespace, tenant=ctx.tenant(t.name, "fault scenario"),
                              admin=admin, gpu_probes={"kubernetes-api": api_probe(admin)},
                              injector=F.SimNodeInjector(admin) if inj.kind == "node_failure" else None,
                              alerts=alerts, alert_wait_s=30.0 if alerts else 0.0)
        name = f"fr-{(inj.name or inj.kind).replace('_', '-')}-{i:02d}"
        kw: dict[str, Any] = {"airflow_retries": ctx.spec.airflow_retries, "name": inj.name or inj.kind}
        if inj.kind == "hang":
            kw["task_timeout_s"] = inj.timeout_seconds
        if inj.kind == "missing_image":
            kw["observe_s"] = inj.observe_seconds
        if inj.kind == "node_failure":
            kw.update(node=inj.node, run_before_fail_s=inj.at_seconds, recover_after_s=inj.recover_after_seconds)
        try:
            rec = F.run_scenario(fctx, F.Scenario[_SCENARIO[inj.kind]],
                                 _manifest(ctx, inj.workload, t.name, name, role=f"injection.{inj.kind}"), **kw)
            records.append(rec.model_dump(mode="json"))
        except Exception as exc:  # noqa: BLE001 - one scenario's failure must not hide the others
            records.append({"scenario": inj.name or inj.kind, "tenant": t.name, "namespace": t.namespace, "pod": name,
                            "verified": False, "reason": f"{type(exc).__name__}: {exc}"})
    ctx.writer.write_json("fault_records", records)
    rows = _failure_rows(records)
    ctx.writer.write("failure_records", rows, source="kubernetes-api (tenant and admin) + node injector")
    return {"scenarios": len(rows), "verified": sum(1 for r in rows if r.verified)}


def _failure_rows(records: list[dict]) -> list:
    """The ``failure_records`` table rows: complete records through ``evidence_rows.failure_records`` (operator
    view from Warning events and alerts, recovery from what happened); a scenario that raised keeps its reason."""
    from gpupoc.evidence.tables import FailureRecord as Row
    from gpupoc.pipeline import evidence_rows
    from gpupoc.pipeline.faults import FaultRecord

    rows = []
    for r in records:
        if "trigger" in r:
            rows += evidence_rows.failure_records([FaultRecord.model_validate(r)])
        else:
            rows.append(Row(scenario=r.get("scenario") or "?", pod=r.get("pod"), namespace=r.get("namespace"),
                            verified=False, reason=r.get("reason") or "the scenario raised before its record"))
    return rows


def _alert_source(ctx):
    """Alerts from the webhook receiver's record, else Prometheus' ALERTS series, else none (not verified)."""
    from gpupoc.pipeline import fault_record as FR

    try:
        from gpupoc.monitoring.sources import resolve_sources

        src = resolve_sources(plan_sources=ctx.plan.evidence_sources)
        if src.receiver_record:
            return FR.receiver_alerts(str(ctx.plan.resolve_path(src.receiver_record)))
        return FR.prometheus_alerts(src.prometheus_client()) if src.prometheus else None
    except Exception:  # noqa: BLE001 - no monitoring: the records say alerts were not verified
        return None


# ---- audit trail ----
def quota_change(ctx) -> dict:
    """An administrator changes a tenant's GPU quota and restores it; both land in the ledger."""
    from gpupoc.pipeline.audit import change_quota, restore_quota

    qc = ctx.spec.quota_change
    if qc is None:
        return {"skipped": "no quota_change in the plan"}
    t = ctx.plan.tenant(qc.tenant)
    admin = ctx.admin("quota change by an administrator")
    change = change_quota(admin, t.namespace, _gpu_quota_name(admin, t.namespace), qc.gpus)
    if qc.restore:
        time.sleep(2)
        change = restore_quota(admin, change)
    ctx.writer.write_json("quota_change", change.model_dump(mode="json"))
    return {"changed": change.change_status, "restored": change.restored}


def artifact_hand_over(ctx) -> dict:
    """Once the producer has finished, record its artifact: path, sha256, producer and consumer."""
    from gpupoc.pipeline.artifacts import hand_over

    art = ctx.spec.artifact
    if art is None:
        return {"skipped": "no artifact in the plan"}
    _wait_released(ctx, ctx.spec.gate_timeout_seconds)
    t = ctx.plan.tenant(art.producer.tenant)
    caller = ctx.tenant(t.name, "artifact hand-over")
    deadline = time.monotonic() + ctx.hold_timeout_s()
    producer = None
    while time.monotonic() < deadline:
        pods = W.list_pods(caller, [t.namespace], ctx.selector + ",gpupoc.io/role=artifact-producer")
        done = [p for p in pods if (p.get("status") or {}).get("phase") in W.TERMINAL]
        if done:
            producer = done[-1]["metadata"]["name"]
            break
        time.sleep(2)
    if producer is None:
        ctx.writer.write_json("artifact", {"verified": False, "reason": "the producer pod did not finish in time"})
        return {"verified": False}
    consumer, why = _run_consumer(ctx, art, caller, t.namespace, producer, deadline)
    rec = hand_over(caller, t.namespace, producer, consumer=consumer or "pipeline")
    if why:
        rec.reason = "; ".join(x for x in (why, rec.reason) if x)
    ctx.writer.write_json("artifact", rec.model_dump(mode="json"))
    return {"verified": rec.verified, "sha256": rec.sha256, "consumer": rec.consumer}


def _run_consumer(ctx, art, producer_caller, namespace: str, producer: str, deadline: float) -> tuple[str, str]:
    """Start the plan's consumer workload with ``--artifact <the path the producer reported>`` as the
    consumer's tenant, and wait for it to end: (its pod name, "") or ("", why the pipeline hashes instead)."""
    from gpupoc.pipeline.artifacts import parse_artifact_lines
    from gpupoc.plan import class_items
    from gpupoc.podspec import labels as L

    log = producer_caller.call("GET", f"/api/v1/namespaces/{namespace}/pods/{producer}/log")
    lines = parse_artifact_lines(log.text) if log.ok else []
    item = next((i for i in class_items(ctx.plan, ctx.test_class) if i.role == "artifact-consumer"), None)
    if not lines or item is None:
        return "", ("" if lines else "the producer reported no artifact path for a consumer to read")
    ct = ctx.plan.tenant(art.consumer.tenant)
    body = _manifest(ctx, art.consumer.workload, ct.name, item.name, role="artifact-consumer")
    body["metadata"]["name"] = f"{item.name}-{abs(hash(ctx.run_id)) % 10**8:08d}"
    body["metadata"]["annotations"][L.ITEM] = item.name
    container = body["spec"]["containers"][0]
    container["args"] = [*(container.get("args") or []), "--artifact", lines[-1].path]
    consumer = ctx.tenant(ct.name, "artifact consumer")
    name = body["metadata"]["name"]
    r = consumer.call("POST", f"/api/v1/namespaces/{ct.namespace}/pods", body=body)
    if not r.ok and r.status != 409:  # 409: a retry of this task created it already
        return "", f"the consumer pod could not be created: HTTP {r.status} {r.message}"
    while time.monotonic() < deadline:
        got = consumer.call("GET", f"/api/v1/namespaces/{ct.namespace}/pods/{name}")
        phase = ((got.body or {}).get("status") or {}).get("phase") if got.ok else None
        if phase == "Succeeded":
            return name, ""
        if phase == "Failed":
            return name, f"the consumer pod {name} failed; see its log"
        time.sleep(2)
    return name, f"the consumer pod {name} did not finish in time"


def collect_audit(ctx, timelines, runs) -> dict:
    """The pipeline's ledger (every task's actions) matched against the platform's audit log."""
    from gpupoc.pipeline.audit import match_ledger, read_audit_lines, read_ledger

    entries = read_ledger(ctx.run_dir / "ledger")
    ctx.writer.write("ledger", [{"at": parse_time(e.at), "actor": e.username, "verb": e.verb,
                                 "resource": e.resource or None, "subresource": e.subresource or None,
                                 "namespace": e.namespace or None, "name": e.name or None, "http_status": e.status,
                                 "purpose": e.purpose or None, "task": e.task or None} for e in entries],
                     source="pipeline ledger")
    audit_path = ctx.plan.evidence_sources.audit_log_path
    if not audit_path:
        ctx.writer.mark_not_verified("audit_matches", "evidence_sources.audit_log_path is not set in the plan; "
                                     "point it at the API server's audit log", "plan")
        matched = None
    else:
        try:
            events = read_audit_lines(ctx.plan.resolve_path(audit_path))
        except OSError as exc:
            ctx.writer.mark_not_verified("audit_matches", f"audit log unreadable: {exc}", str(audit_path))
            events = None
        matched = None
        if events is not None:
            ms = match_ledger(entries, events, verbs={"create", "patch", "update", "delete"})
            ctx.writer.write("audit_matches", [{
                "ledger_action": f"{m.verb} {m.resource} {m.namespace}/{m.name}".strip(), "actor": m.username,
                "verb": m.verb, "resource": m.resource, "namespace": m.namespace or None, "name": m.name or None,
                "at": parse_time(m.at), "audit_event_id": m.audit_id or None, "matched": m.matched,
                "delay_seconds": m.delay_s, "decision": m.audit_decision or None, "code": m.audit_code}
                for m in ms], source=str(audit_path))
            matched = sum(1 for m in ms if m.matched)
    art = ctx.read_file("artifact")
    if art and art.get("path"):
        ctx.writer.write("artifacts", [{"path": art["path"], "sha256": art.get("sha256") or None,
                                        "producer": art.get("producer_pod"), "consumer": art.get("consumer"),
                                        "namespace": art.get("namespace"), "size_bytes": art.get("size_bytes"),
                                        "verified": bool(art.get("verified"))}],
                         source="producer log + " + ("volume" if art.get("consumer") in (None, "", "pipeline")
                                                     else "consumer pod log"))
    else:
        ctx.writer.mark_not_verified("artifacts", (art or {}).get("reason") or "no artifact hand-over recorded",
                                     "artifact_hand_over task")
    return {"ledger_entries": len(entries), "audit_matched": matched}


# ---- utilization ----
def collect_utilization(ctx, timelines, runs) -> dict:
    """GPU samples from Prometheus (dcgm-exporter) over the run, aggregated per bucket, GPU and holder."""
    try:
        from gpupoc.monitoring.collectors import collect_gpu_samples
        from gpupoc.monitoring.results import Window
        from gpupoc.monitoring.sources import resolve_sources
        from gpupoc.validation.derived import aggregate_utilization_samples, samples_from_collector

        src = resolve_sources(plan_sources=ctx.plan.evidence_sources)
        starts = [t.submitted_at for t in timelines if t.submitted_at]
        ends = [t.finished_at for t in timelines if t.finished_at]
        if not starts or not getattr(src, "prometheus", None):
            raise RuntimeError("no Prometheus configured (evidence_sources.prometheus_url or `gpupoc stack up`)"
                               if starts else "the wave left no timeline to sample")
        result = collect_gpu_samples(src.prometheus, Window(min(starts), max(ends or starts)))
        frame = getattr(result, "frame", None)
        if frame is None or frame.empty:
            raise RuntimeError(getattr(result, "reason", "") or "Prometheus returned no GPU samples for the window")
        step = result.window.step if getattr(result, "window", None) else 15.0
        samples = samples_from_collector(frame, step)
        if samples.empty:
            raise RuntimeError(f"Prometheus answered {len(frame)} GPU sample(s) but none of a GPU held by a pod "
                               "(no pod/exported_pod label on DCGM_FI_DEV_GPU_UTIL): is dcgm-exporter's pod "
                               "attribution (kubelet pod-resources) enabled?")
        bucket = f"{int(ctx.spec.bucket_seconds)}s"
        agg = aggregate_utilization_samples(samples, bucket=bucket)
        agg["tenant"] = agg["namespace"].map({t.namespace: t.name for t in ctx.plan.tenants})
        task_types = {r["pod"]: r["task_type"] for r in runs if r.get("pod")}
        agg["task_type"] = [tt if isinstance(tt, str) and tt else task_types.get(p)
                            for tt, p in zip(agg["task_type"], agg["pod"])]
        ctx.writer.write("utilization", agg.to_dict("records"), source="prometheus (dcgm-exporter)")
        return {"utilization_rows": len(agg)}
    except Exception as exc:  # noqa: BLE001 - a missing source is "not verified", with the reason
        ctx.writer.mark_not_verified("utilization", f"GPU samples not collected: {exc}", "prometheus")
        return {"utilization_rows": 0, "utilization_reason": str(exc)[:200]}


def collect_fault_recovery(ctx, timelines, runs) -> dict:
    """The ``alerts`` table: what operators were told while the failures were provoked (receiver or ALERTS)."""
    from datetime import timedelta

    from gpupoc.monitoring.results import Window
    from gpupoc.pipeline.alert_rows import alert_records, collect_alert_history
    from gpupoc.pipeline.audit import utcnow

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
    return {"alerts": len(rows), "alert_names": sorted({r["alertname"] for r in rows})}


# test class -> [(task id, step)]
PROBES: dict[str, list] = {
    "tenant_isolation": [("isolation_probes", isolation_probes), ("sample_quotas", sample_quotas)],
    "fault_recovery": [("inject_faults", inject_faults)],
    "audit_trail": [("quota_change", quota_change), ("artifact_hand_over", artifact_hand_over)],
}
COLLECTORS = {
    "tenant_isolation": collect_isolation,
    "fault_recovery": collect_fault_recovery,
    "audit_trail": collect_audit,
    "utilization": collect_utilization,
}
