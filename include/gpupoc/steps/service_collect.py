"""collect_evidence for a class's services: the load pods' rows judged against each SLO, the observer's
snapshots, each replica's life and end, and what a node failure under a replica cost (docs/services.md).
Nothing is written for a class that deploys no service."""

from __future__ import annotations

from datetime import timedelta

from gpupoc.common.timefmt import parse_time
from gpupoc.evidence.service_tables import (ServiceHistoryRow, ServiceProbeRow, ServiceRecoveryRow,
                                            ServiceReplicaRow, ServiceSloRow)
from gpupoc.pipeline.k8s import pod_gpus
from gpupoc.pipeline.preemptors import Facts, KnownPod, Preemption, judge, known_pod
from gpupoc.pipeline.service_history import (Replica, Snapshot, endpoint_dropped_at, replacement_ready_at,
                                             replica_end)
from gpupoc.pipeline.service_slo import ProbeRow, parse_rows
from gpupoc.pipeline.service_slo import judge as judge_slo
from gpupoc.pipeline.workload_outcome import event_statements
from gpupoc.podspec import labels as L
from gpupoc.podspec.service import service_selector
from gpupoc.steps.context import RunContext
from gpupoc.steps.service_observer import FAILURES_FILE, HISTORY_FILE, REPLICAS_FILE
from gpupoc.steps.services import LOAD_ROLE, Deployed, deployed

SOURCE = "kubernetes-api (deployments, endpointslices, pods) + load pod log"
SERVICE_TABLE_NAMES = ("service_probes", "service_slo", "service_history", "service_replicas")


def expected_tables(ctx: RunContext) -> tuple[str, ...]:
    """The service tables this run must produce (none without services)."""
    if not ctx.spec.services:
        return ()
    return SERVICE_TABLE_NAMES + (("service_recovery",) if getattr(ctx.spec, "service_failures", None) else ())


def collect_services(ctx: RunContext, runs: list[dict], facts: Facts | None = None) -> dict:
    """Every service table of the run; a summary for the manifest. ``facts``: where a replica's preemptor is
    looked for (``steps.collect.preemption_facts`` with the wave's pods), else the wave's rows alone."""
    services = deployed(ctx)
    if not services:
        return {}
    probes = _probe_rows(ctx, services)
    slo = [_slo_row(ctx, d, probes.get(d.name, [])) for d in services if d.entry.traffic]
    history = [Snapshot.from_dict(s) for s in ctx.read_file(HISTORY_FILE, []) or []]
    replicas = [Replica.from_dict(r) for r in ctx.read_file(REPLICAS_FILE, []) or []]
    ctx.writer.write("service_probes", [_probe_table_row(d, r) for d in services for r in probes.get(d.name, [])],
                     source="load pod log (gpupoc/workload load)")
    ctx.writer.write("service_slo", slo, source="pipeline (service_probes against the plan's SLO)")
    ctx.writer.write("service_history", [_history_row(s) for s in history], source=SOURCE)
    ctx.writer.write("service_replicas", _replica_rows(ctx, services, replicas, runs, facts),
                     source=SOURCE)
    summary = {"services": len(services), "slo_held": sum(1 for r in slo if r.held),
               "slo_harness_lag": sum(1 for r in slo if r.harness_lag)}
    if getattr(ctx.spec, "service_failures", None):
        rows = _recovery_rows(ctx, services, history, replicas, probes)
        ctx.writer.write("service_recovery", rows, source=SOURCE + " + node injector")
        summary["service_failures"] = len(rows)
    return summary


def _probe_rows(ctx: RunContext, services: list[Deployed]) -> dict[str, list[ProbeRow]]:
    """Each service's per-second rows from its load pod's log (the latest load pod of the service)."""
    reader = ctx.reader()
    out: dict[str, list[ProbeRow]] = {}
    for d in services:
        if not d.entry.traffic:
            continue
        selector = f"{service_selector(ctx.run_id, ctx.test_class)},{L.ROLE}={LOAD_ROLE},{L.SERVICE}={d.name}"
        r = reader.call("GET", f"/api/v1/namespaces/{d.namespace}/pods", query=[("labelSelector", selector)])
        pods = sorted((r.body or {}).get("items") or [] if r.ok else [],
                      key=lambda p: p["metadata"].get("creationTimestamp") or "")
        if not pods:
            continue
        tenant = ctx.caller(d.tenant.kube_context)  # the load's log, read as its user reads it
        log = tenant.call("GET", f"/api/v1/namespaces/{d.namespace}/pods/{pods[-1]['metadata']['name']}/log")
        slo = ctx.plan.workload(d.entry.workload).service.slo
        out[d.name] = parse_rows(log.text if log.ok else "", d.name, d.tenant.name, slo)
    return out


def _probe_table_row(d: Deployed, r: ProbeRow) -> ServiceProbeRow:
    return ServiceProbeRow(service=d.name, workload=d.entry.workload, tenant=r.tenant, second=r.second,
                           ts=parse_time(r.ts), sent=r.sent, ok=r.ok, unready=r.unready, unanswered=r.unanswered,
                           availability_pct=r.availability_pct, p50_ms=r.p50_ms, p95_ms=r.p95_ms, p99_ms=r.p99_ms,
                           breach=r.breach, late_sent=r.late_sent, late_read=r.late_read,
                           max_send_lag_ms=r.max_send_lag_ms, server_p50_ms=r.server_p50_ms,
                           server_p95_ms=r.server_p95_ms, server_p99_ms=r.server_p99_ms,
                           judged_p95_ms=r.judged_p95_ms, judged_p99_ms=r.judged_p99_ms)


def _slo_row(ctx: RunContext, d: Deployed, rows: list[ProbeRow]) -> ServiceSloRow:
    slo = ctx.plan.workload(d.entry.workload).service.slo
    result = judge_slo(rows, slo, d.name)
    times = [parse_time(r.ts) for r in rows if parse_time(r.ts) is not None]
    return ServiceSloRow(
        service=d.name, workload=d.entry.workload, tenant=d.tenant.name, traffic_started_at=min(times, default=None),
        traffic_ended_at=max(times, default=None), seconds=result.seconds, sent=result.sent,
        availability_pct=result.availability_pct, worst_p95_ms=result.worst_p95_ms, worst_p99_ms=result.worst_p99_ms,
        breach_seconds=result.breach_seconds if rows else None, unready_answers=result.unready_answers if rows else None,
        slo_availability_pct=slo.availability_pct, slo_p95_ms=slo.p95_ms, slo_p99_ms=slo.p99_ms,
        late_sent=result.late_sent if rows else None, late_read=result.late_read if rows else None,
        harness_lag_pct=result.harness_lag_pct, max_harness_lag_pct=slo.max_harness_lag_pct,
        harness_lag=result.harness_lag if rows else None, held=result.held if rows else None, reason=result.reason)


def _history_row(s: Snapshot) -> ServiceHistoryRow:
    return ServiceHistoryRow(at=s.at, service=s.service, desired_replicas=s.desired, ready_replicas=s.ready_replicas,
                             available_replicas=s.available_replicas, ready_endpoints=len(s.ready_endpoints),
                             not_ready_endpoints=len(s.not_ready_endpoints),
                             ready_endpoint_pods=",".join(s.ready_endpoints) or None)


def _replica_rows(ctx: RunContext, services: list[Deployed], replicas: list[Replica], runs: list[dict],
                  facts: Facts | None = None) -> list[ServiceReplicaRow]:
    """Each replica's life and end; a preemption is judged as QC-13 judges one (``pipeline/preemptors.py``):
    ``preempted_by_higher`` only for a preemptor the platform's records resolve to a pod of higher priority,
    None (``preemption_judged`` unresolved: SVC-04 not verified) when none does. Priorities alone decide,
    whatever the queues."""
    tenants = {d.name: d.tenant.name for d in services}
    records = ctx.platform_records(sorted({d.namespace for d in services}))
    facts = _facts(runs, replicas, records, facts)
    rows = []
    for r in sorted(replicas, key=lambda r: r.first_seen):
        meta, spec = r.pod["metadata"], r.pod.get("spec") or {}
        service = (meta.get("labels") or {}).get(L.SERVICE, "")
        end = replica_end(r, records.events, records.deletions.get((meta["namespace"], r.name), []))
        p = _preemption(r, end, records.events, facts) if end.outcome == "preempted" else None
        rows.append(ServiceReplicaRow(
            service=service, tenant=tenants.get(service, meta["namespace"]), pod=r.name, node=spec.get("nodeName"),
            gpus=pod_gpus(r.pod), priority=spec.get("priority"), created_at=parse_time(meta.get("creationTimestamp")),
            ready_at=r.ready_at, ended_at=end.at, end=end.outcome, end_reason=end.reason, end_message=end.message,
            **_preemption_columns(p)))
    return rows


def _preemption_columns(p: Preemption | None) -> dict:
    if p is None:
        return {}
    return {"preemptor": p.preemptor, "preemptor_priority": p.priority, "preempted_by_higher": p.by_higher,
            "preemptor_named_by": p.named_by, "preemption_judged": p.judgement.value}


def _facts(runs: list[dict], replicas: list[Replica], records, facts: Facts | None) -> Facts:
    """Where preemptors are looked for: ``facts`` (else the wave's rows), the replicas, the services' records."""
    if facts is None:
        facts = Facts()
        for r in runs:
            facts.add(KnownPod(f"{r.get('namespace')}/{r.get('pod')}", r.get("priority"), r.get("node")))
    for r in replicas:
        facts.add(known_pod(r.pod))
    for uid, key in (getattr(records, "uids", None) or {}).items():
        facts.uids.setdefault(uid, key)
    for key, deletes in (records.deletions or {}).items():
        facts.deletions.setdefault(key, deletes)
    return facts.with_bindings()


def _preemption(r: Replica, end, events: list[dict], facts: Facts) -> Preemption:
    """SVC-04 on one preempted replica: its end as a ``workload_runs`` row, judged on the platform's records."""
    meta, spec = r.pod["metadata"], r.pod.get("spec") or {}
    victim = {"namespace": meta["namespace"], "pod": r.name, "priority": spec.get("priority"),
              "node": spec.get("nodeName"), "outcome": "preempted", "outcome_by": end.by,
              "outcome_source": "replica end", "outcome_reason": end.reason, "outcome_message": end.message}
    return judge(victim, event_statements(events, meta["namespace"], r.name), facts, within_queue=False)


def _recovery_rows(ctx: RunContext, services: list[Deployed], history: list[Snapshot], replicas: list[Replica],
                   probes: dict[str, list[ProbeRow]]) -> list[ServiceRecoveryRow]:
    rows = []
    for f in ctx.read_file(FAILURES_FILE, []) or []:
        failed = parse_time(f.get("failed_at"))
        if not f.get("node") or failed is None:
            rows.append(ServiceRecoveryRow(service=f.get("service", ""), node=f.get("node") or "",
                                           reason=f.get("reason") or f.get("detail") or "the node was not failed"))
            continue
        rows.append(_recovery(f, failed, history, replicas, probes.get(f["service"], [])))
    return rows


def _recovery(f: dict, failed, history: list[Snapshot], replicas: list[Replica],
              probes: list[ProbeRow]) -> ServiceRecoveryRow:
    service = f["service"]
    drops = [endpoint_dropped_at(history, service, pod, failed) for pod in f.get("victims") or []]
    removed = all(d is not None for d in drops) and bool(drops)
    own = {r.name for r in replicas if (r.pod["metadata"].get("labels") or {}).get(L.SERVICE) == service}
    new_pod, ready_at = replacement_ready_at(replicas, own, failed - timedelta(seconds=1))
    after = [r for r in probes if (parse_time(r.ts) or failed) >= failed - timedelta(seconds=1)]
    return ServiceRecoveryRow(
        service=service, node=f["node"], failed_at=failed, recovered_at=parse_time(f.get("recovered_at")),
        victim_pods=",".join(f.get("victims") or []) or None, endpoint_removed=removed,
        endpoint_removal_seconds=round(max((d - failed).total_seconds() for d in drops), 3) if removed else None,
        replacement_pod=new_pod, replacement_ready=ready_at is not None,
        replacement_seconds=round((ready_at - failed).total_seconds(), 3) if ready_at else None,
        breach_seconds=sum(1 for r in after if r.breach) if probes else None,
        unready_answers=sum(r.unready for r in after) if probes else None, injection=f.get("method"),
        reason=None if removed and ready_at else _why_not(removed, ready_at))


def _why_not(removed: bool, ready_at) -> str:
    parts = []
    if not removed:
        parts.append("the failed node's replica stayed a ready endpoint while the observer looked")
    if ready_at is None:
        parts.append("no replacement replica became ready while the observer looked")
    return "; ".join(parts)
