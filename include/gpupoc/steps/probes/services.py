"""The class probes that act on services: the audit class's scale of each service by its tenant (up one replica,
then back), and the fault-recovery class's node failure under a serving replica (docs/services.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import time

from gpupoc.common.timefmt import rfc3339, utcnow
from gpupoc.podspec import labels as L
from gpupoc.podspec.service import service_selector
from gpupoc.steps.probes.common import wait_for_file, waiting
from gpupoc.steps.service_observer import FAILURES_FILE, SCALE_FILE
from gpupoc.steps.services import LOAD_ROLE, ROLLOUT_MARGIN_SECONDS, SERVICES_READY, deployed

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext

SCALE_PATCH = "application/merge-patch+json"


def _available(ctx: RunContext, d) -> int:
    r = ctx.reader().call("GET", f"/apis/apps/v1/namespaces/{d.namespace}/deployments/{d.name}")
    return int((((r.body or {}).get("status") or {}).get("availableReplicas") or 0)) if r.ok else 0


def _scale(ctx: RunContext, d, caller, replicas: int) -> dict:
    path = f"/apis/apps/v1/namespaces/{d.namespace}/deployments/{d.name}/scale"
    at = utcnow()
    r = caller.call("PATCH", path, body={"spec": {"replicas": replicas}}, content_type=SCALE_PATCH)
    deadline = time.monotonic() + ROLLOUT_MARGIN_SECONDS
    while r.ok and _available(ctx, d) != replicas and time.monotonic() < deadline:
        time.sleep(1.0)
    reached = r.ok and _available(ctx, d) == replicas
    return {"service": d.name, "replicas": replicas, "at": rfc3339(at), "http_status": r.status,
            "reached": reached, "reached_at": rfc3339(utcnow()) if reached else None}


def scale_services(ctx: RunContext) -> dict:
    """Each service's tenant scales it up by one replica and, once the new replica is available, back down
    (``patch deployments/scale``, in the ledger): who scaled which service is then judged against the audit log."""
    services = deployed(ctx)
    steps: list[dict] = []
    if services:
        with waiting(ctx, f"{len(services)} service(s) to roll out, scale up one replica and back",
                     3 * ROLLOUT_MARGIN_SECONDS):
            wait_for_file(ctx, SERVICES_READY, ROLLOUT_MARGIN_SECONDS, poll_s=1.0)
            for d in services:
                caller = ctx.tenant(d.tenant.name, "scale the tenant's service")
                steps.append(_scale(ctx, d, caller, d.replicas + 1))
                steps.append(_scale(ctx, d, caller, d.replicas))
    ctx.writer.write_json(SCALE_FILE, steps)
    return {"scaled": len(steps), "reached": sum(1 for s in steps if s["reached"])}


def _traffic_running(ctx: RunContext, d) -> bool:
    selector = f"{service_selector(ctx.run_id, ctx.test_class)},{L.ROLE}={LOAD_ROLE},{L.SERVICE}={d.name}"
    r = ctx.reader().call("GET", f"/api/v1/namespaces/{d.namespace}/pods", query=[("labelSelector", selector)])
    pods = (r.body or {}).get("items") or [] if r.ok else []
    return any((p.get("status") or {}).get("phase") == "Running" for p in pods)


def _load_nodes(ctx: RunContext, d) -> set[str]:
    selector = f"{service_selector(ctx.run_id, ctx.test_class)},{L.ROLE}={LOAD_ROLE},{L.SERVICE}={d.name}"
    r = ctx.reader().call("GET", f"/api/v1/namespaces/{d.namespace}/pods", query=[("labelSelector", selector)])
    return {p["spec"].get("nodeName") for p in ((r.body or {}).get("items") or [] if r.ok else [])}


def _ready_replicas(ctx: RunContext, d) -> list[dict]:
    selector = f"{service_selector(ctx.run_id, ctx.test_class)},{L.SERVICE}={d.name},{L.ROLE}=service"
    r = ctx.reader().call("GET", f"/api/v1/namespaces/{d.namespace}/pods", query=[("labelSelector", selector)])
    pods = (r.body or {}).get("items") or [] if r.ok else []
    return [p for p in pods if not p["metadata"].get("deletionTimestamp") and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in (p.get("status") or {}).get("conditions") or [])]


def fail_service_nodes(ctx: RunContext) -> dict:
    """For each planned service failure: once its traffic runs, wait ``at_seconds``, fail the node of one ready
    replica with the plan's injector, and recover it ``recover_after_seconds`` later. What follows (the endpoint
    dropped, the replacement, the traffic) is read from the observer's snapshots and the load pod."""
    from gpupoc.classes.fault_recovery.probes import node_injector

    by_workload = {d.entry.workload: d for d in deployed(ctx)}
    records = []
    for f in ctx.spec.service_failures:
        d = by_workload[f.service]
        budget = 2 * ROLLOUT_MARGIN_SECONDS + f.at_seconds + f.recover_after_seconds
        with waiting(ctx, f"service {d.name}: its traffic, then a node failure under a replica", budget):
            records.append(_fail_one(ctx, d, f, node_injector(ctx, ctx.spec.service_injector(f))))
    ctx.writer.write_json(FAILURES_FILE, records)
    return {"failures": len(records), "injected": sum(1 for r in records if r.get("node"))}


def _fail_one(ctx: RunContext, d, f, injector) -> dict:
    deadline = time.monotonic() + 2 * ROLLOUT_MARGIN_SECONDS
    while not _traffic_running(ctx, d) and time.monotonic() < deadline:
        time.sleep(1.0)
    time.sleep(f.at_seconds)
    ready = _ready_replicas(ctx, d)
    if not ready:
        return {"service": d.name, "node": None, "reason": "no ready replica to fail a node under"}
    traffic = _load_nodes(ctx, d)  # a node under a replica, not the load pod's, where there is one
    node = sorted((p["spec"].get("nodeName") in traffic, p["spec"].get("nodeName") or "") for p in ready)[0][1]
    victims = sorted(p["metadata"]["name"] for p in ready if p["spec"].get("nodeName") == node)
    failed = injector.fail(node)
    time.sleep(f.recover_after_seconds)
    recovered = injector.recover(node)
    return {"service": d.name, "node": node, "victims": victims, "failed_at": failed.at,
            "recovered_at": recovered.at, "method": failed.method, "ok": failed.ok and recovered.ok,
            "detail": "; ".join(x for x in (failed.detail, recovered.detail) if x)}
