"""A class's services (``test_classes.<class>.services``): their manifests for the cncf.kubernetes provider's
resource operators, their rollout before the wave's release, their load pods, the ledger of what the tenants
did to them, and what the cleanup deletes if a delete task did not (docs/services.md).

Each service is the run's own Deployment and Service, named ``<workload>-<6 hex of run and class>`` so that two
runs never share one; its objects carry ``gpupoc.io/service-of`` instead of the wave's test-class label, so
the wave's observer and evidence never take a serving replica for a wave pod.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hashlib
import time
from dataclasses import dataclass
from datetime import datetime

import yaml

from gpupoc.common.timefmt import parse_time, rfc3339, utcnow
from gpupoc.exceptions import SourceUnavailable
from gpupoc.pipeline import waits
from gpupoc.pipeline.k8s import service_account_actor
from gpupoc.plan.model import Tenant
from gpupoc.plan.service_spec import ServiceEntry
from gpupoc.podspec import labels as L
from gpupoc.podspec.kpo import identity_kwargs
from gpupoc.podspec.service import ServiceObjects, service_objects, service_selector

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext

SERVICES_READY = "services_ready"   # files/services_ready.json: each service's rollout, written by services_ready
# files/service_load_failed-<workload>.json: the service's ``service_traffic`` task failed (its load pod refused,
# never started or failed); the observer waits no longer for that load
LOAD_FAILED_PREFIX = "service_load_failed-"
LOAD_ROLE = "service-load"
HOSTNAME_LABEL = "kubernetes.io/hostname"
# How long a rollout may take beyond its replicas' warm-up: image pull, scheduling, the first readiness probes.
ROLLOUT_MARGIN_SECONDS = 120.0


@dataclass(frozen=True)
class Deployed:
    """One service of the run: the plan's entry, its tenant and its manifests."""

    entry: ServiceEntry
    tenant: Tenant
    objects: ServiceObjects

    @property
    def name(self) -> str:
        return self.objects.deployment["metadata"]["name"]

    @property
    def namespace(self) -> str:
        return self.tenant.namespace

    @property
    def replicas(self) -> int:
        return int(self.objects.deployment["spec"]["replicas"])


def service_name(run_id: str, test_class: str, workload: str) -> str:
    """The run's name of a service: the workload's name and 6 hex of the run and class (a DNS label)."""
    digest = hashlib.sha256(f"{run_id}/{test_class}".encode()).hexdigest()[:6]
    return f"{workload[:56]}-{digest}"


def deployed(ctx: RunContext) -> list[Deployed]:
    """The class's services with their manifests (none when the plan deploys none)."""
    out = []
    for entry in ctx.spec.services:
        tenant = ctx.plan.tenant(entry.tenant)
        made = service_objects(ctx.plan.workload(entry.workload), tenant, ctx.plan, run_id=ctx.run_id,
                               test_class=ctx.test_class,
                               name=service_name(ctx.run_id, ctx.test_class, entry.workload),
                               replicas=entry.replicas, traffic_seconds=entry.traffic_seconds)
        out.append(Deployed(entry, tenant, made))
    return out


def resource_kwargs(ctx: RunContext) -> list[dict]:
    """One mapped resource operator per service: its Deployment and Service as one YAML document stream, the
    tenant's namespace and identity (the same list creates and deletes them)."""
    return [{"yaml_conf": yaml.safe_dump_all([d.objects.deployment, d.objects.service], sort_keys=False),
             "namespace": d.namespace, **identity_kwargs(ctx.plan, d.tenant)} for d in deployed(ctx)]


def load_kwargs(ctx: RunContext) -> list[dict]:
    """One mapped load-pod task per service that gets traffic in this class."""
    return [{"service": d.entry.workload} for d in deployed(ctx) if d.entry.traffic]


def load_pod(ctx: RunContext, workload: str) -> tuple[dict, Tenant]:
    """The load pod of the class's service of ``workload``, and the tenant that runs it. It keeps off the nodes
    its service's replicas run on (where the pool has others), as a load generator should: it neither competes
    with the replicas it measures nor dies with them when a node under a replica fails."""
    for d in deployed(ctx):
        if d.entry.workload == workload:
            pod = d.objects.load_pod
            pod["metadata"]["labels"][L.ROLE] = LOAD_ROLE
            avoid = replica_nodes(ctx, d)
            pool = ctx.plan.pool(ctx.plan.workload(workload).pool)
            if avoid and set(pool.node_names) - avoid:
                pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [
                        {"key": HOSTNAME_LABEL, "operator": "NotIn", "values": sorted(avoid)}]}]}}}
            return pod, d.tenant
    raise KeyError(f"test_classes.{ctx.test_class}.services has no service of workload {workload!r}")


def record_load_failure(ctx: RunContext, workload: str, error: BaseException | None) -> None:
    """The ``service_traffic`` task of ``workload`` failed with ``error`` (its kind and HTTP status are kept, not
    its text); None: a new try began, and no past failure counts."""
    if error is None:
        ctx.files(f"{LOAD_FAILED_PREFIX}{workload}").unlink(missing_ok=True)
        return
    ctx.writer.write_json(f"{LOAD_FAILED_PREFIX}{workload}", {
        "service": workload, "at": rfc3339(utcnow()), "error": type(error).__name__,
        "status": getattr(error, "status", None)})


def load_failed(ctx: RunContext, workload: str) -> bool:
    """Whether the ``service_traffic`` task of ``workload`` recorded a failure (``record_load_failure``)."""
    return ctx.files(f"{LOAD_FAILED_PREFIX}{workload}").is_file()


def replica_nodes(ctx: RunContext, d: Deployed) -> set[str]:
    """The nodes the service's replicas run on now (read as its tenant; none known when the API cannot say)."""
    selector = f"{service_selector(ctx.run_id, ctx.test_class)},{L.SERVICE}={d.name},{L.ROLE}=service"
    try:
        r = ctx.caller(d.tenant.kube_context).call("GET", f"/api/v1/namespaces/{d.namespace}/pods",
                                                           query=[("labelSelector", selector)])
    except SourceUnavailable:
        return set()
    pods = (r.body or {}).get("items") or [] if r.ok and isinstance(r.body, dict) else []
    return {p["spec"]["nodeName"] for p in pods if (p.get("spec") or {}).get("nodeName")}


def await_rollout(ctx: RunContext, poll_s: float = 1.0) -> dict:
    """Until every service's Deployment has all its replicas available (``kubectl rollout status``), or its
    budget ran out; each service's rollout is recorded (``files/services_ready.json``). Never fails: a service
    that did not roll out leaves its checks to say so, and the wave goes ahead."""
    services = deployed(ctx)
    if not services:
        return {"services": 0}
    warmup = max((ctx.plan.workload(d.entry.workload).service.warmup_seconds for d in services), default=0)
    budget = ROLLOUT_MARGIN_SECONDS + float(warmup)
    started, deadline = utcnow(), time.monotonic() + budget
    state: dict[str, dict] = {}
    waits.write_note(ctx.run_dir, ctx.task or "services_ready", f"{len(services)} service(s) to roll out", budget)
    try:
        while True:
            state = {d.name: _rollout(ctx, d) for d in services}
            if all(s["ready"] for s in state.values()) or time.monotonic() >= deadline:
                break
            time.sleep(poll_s)
    finally:
        waits.clear_note(ctx.run_dir, ctx.task or "services_ready")
    record = {"started_at": rfc3339(started), "services": state}
    ctx.writer.write_json(SERVICES_READY, record)
    return {"services": len(services), "ready": sorted(n for n, s in state.items() if s["ready"]),
            "not_ready": sorted(n for n, s in state.items() if not s["ready"])}


def _rollout(ctx: RunContext, d: Deployed) -> dict:
    try:
        r = ctx.reader().call("GET", f"/apis/apps/v1/namespaces/{d.namespace}/deployments/{d.name}")
    except SourceUnavailable as exc:  # the API did not answer this time: not ready yet, the wait goes on
        return {"ready": False, "available": 0, "replicas": d.replicas, "at": None, "reason": str(exc)[:200]}
    if not r.ok or not isinstance(r.body, dict):
        return {"ready": False, "available": 0, "replicas": d.replicas, "at": None,
                "reason": f"HTTP {r.status}: {r.message}"}
    status = r.body.get("status") or {}
    available = int(status.get("availableReplicas") or 0)
    updated = int(status.get("updatedReplicas") or 0)
    ready = available >= d.replicas and updated >= d.replicas
    return {"ready": ready, "available": available, "replicas": d.replicas, "at": rfc3339(utcnow()) if ready else None,
            "reason": "" if ready else f"{available} of {d.replicas} replicas available"}


def ledger_writes(ctx: RunContext, verb: str, yaml_conf: str, at: datetime, status: int,
                  purpose: str) -> None:
    """The resource operator's writes (one per object of ``yaml_conf``) in the run's ledger, as its tenant: the
    provider's operator calls the API itself, outside the pipeline's ledgered client."""
    from gpupoc.pipeline.audit import Ledger

    ledger = Ledger(ctx.run_dir / "ledger" / f"{ctx.task or 'service'}-{verb}.jsonl", task=ctx.task, fresh=False)
    tenants = {t.name: t for t in ctx.plan.tenants}
    for doc in yaml.safe_load_all(yaml_conf):
        meta = (doc or {}).get("metadata") or {}
        tenant = tenants.get((meta.get("labels") or {}).get(L.TENANT, ""))
        if tenant is None:
            continue
        resource, group = ("deployments", "apps") if doc.get("kind") == "Deployment" else ("services", "")
        base = f"/apis/apps/v1/namespaces/{tenant.namespace}" if group else f"/api/v1/namespaces/{tenant.namespace}"
        ledger.record(service_account_actor(tenant.kube_context, tenant.namespace, tenant.service_account), verb,
                      at=at, finished_at=utcnow(), resource=resource, api_group=group, namespace=tenant.namespace,
                      name=meta.get("name", ""), method="POST" if verb == "create" else "DELETE",
                      path=f"{base}/{resource}" + ("" if verb == "create" else f"/{meta.get('name', '')}"),
                      status=status, outcome="allowed" if 200 <= status < 300 else "failed", purpose=purpose)


def delete_leftovers(ctx: RunContext) -> list[str]:
    """What a failed delete task left of the run's services (Deployments first, so no replica comes back), as
    the administrator; the errors."""
    admin = ctx.admin("delete the run's services left after the class")
    selector = service_selector(ctx.run_id, ctx.test_class)
    errors = []
    for ns in ctx.namespaces:
        for api, resource in (("/apis/apps/v1", "deployments"), ("/api/v1", "services")):
            listed = admin.inner.call("GET", f"{api}/namespaces/{ns}/{resource}", query=[("labelSelector", selector)])
            for obj in (listed.body or {}).get("items") or [] if listed.ok else []:
                name = obj["metadata"]["name"]
                r = admin.call("DELETE", f"{api}/namespaces/{ns}/{resource}/{name}", body={})
                if not r.ok and r.status != 404:
                    errors.append(f"{resource} {ns}/{name}: HTTP {r.status}: {r.message}")
    return errors


def rollout_times(ctx: RunContext) -> dict[str, datetime | None]:
    """When each service had rolled out (None: it never did), from ``services_ready``."""
    record = ctx.read_file(SERVICES_READY, {}) or {}
    return {name: parse_time(s.get("at")) for name, s in (record.get("services") or {}).items()}
