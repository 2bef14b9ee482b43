"""Tenant isolation probes: cross-tenant attempts, access reviews, over-quota submission, quota samples, shares.

Each cross-tenant attempt is made with the actor's own token and paired with the SubjectAccessReview an
administrator asks for the same request. The stronger proof, a 403 matched to an audit event with decision
``forbid``, is attached afterwards by ``attach_audit`` once the audit log has been collected. Any attempt the
platform let through is a P1 finding. Writes that could change another tenant's objects are sent with
``dryRun=All`` and undone as the administrator if a platform ignores the dry run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from pydantic import BaseModel, ConfigDict

from gpupoc.kube.resources import GPU_QUOTA_KEY
from gpupoc.common.timefmt import parse_time, rfc3339, utcnow
from gpupoc.pipeline.audit import find_audit_event
from gpupoc.pipeline.k8s import Actor, KubeCaller, Response, request_info

P1 = "P1"
PROBE_LABEL = "gpupoc.io/probe"


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AccessAttempt(_Row):
    """One cross-tenant request with the actor's token, its access review, and its audit record."""

    actor: str
    actor_username: str
    actor_namespace: str = ""
    target_namespace: str
    action: str
    verb: str
    resource: str
    subresource: str = ""
    name: str = ""
    at: str
    expected: str = "denied"
    http_status: int
    allowed: bool | None  # None when the answer proves neither (5xx)
    message: str
    sar_allowed: bool | None = None
    sar_reason: str = ""
    sar_agrees: bool | None = None
    audit_matched: bool | None = None  # None until attach_audit ran
    audit_id: str = ""
    finding: str = ""
    severity: str = ""


@dataclass(frozen=True)
class Targets:
    """Names of real objects in the target namespace (probes on real names prove more than on made-up ones)."""

    namespace: str
    pod: str = "gpupoc-probe-missing"
    secret: str = "gpupoc-probe-missing"
    quota: str = "gpupoc-probe-missing"
    artifact_config_map: str = "artifact-index"
    deployment: str = "gpupoc-probe-missing"   # a serving Deployment (the tenant's service)
    service: str = "gpupoc-probe-missing"


@dataclass(frozen=True)
class Probe:
    action: str
    method: str
    path: str
    query: tuple = ()
    body_kind: str = ""  # "pod" | "quota" | "scale" | "label" | ""


# The plan's probe actions (gpupoc.plan.classes.ProbeAction) -> the attempts each one makes.
PLAN_ACTIONS: dict[str, tuple[str, ...]] = {
    "list_pods": ("list_pods",), "get_pod": ("get_pod",), "read_logs": ("read_logs",),
    "read_secrets": ("list_secrets", "get_secret"), "read_configmaps": ("list_configmaps", "get_artifact_index"),
    "create_pod": ("create_pod",), "patch_quota": ("patch_quota",),
    "scale_service": ("scale_service",), "patch_service": ("patch_service",), "proxy_service": ("proxy_service",),
}
SERVICE_ACTIONS = ("scale_service", "patch_service", "proxy_service")


def probes_for(t: Targets, actions: Iterable[str] | None = None) -> list[Probe]:
    """The cross-tenant attempts made against one target namespace (all, or those of the plan's ``actions``)."""
    wanted = None
    if actions is not None:
        wanted = set()
        for a in actions:
            a = getattr(a, "value", a)
            if a not in PLAN_ACTIONS:
                raise ValueError(f"probes.actions: unknown action {a!r}; one of {sorted(PLAN_ACTIONS)}")
            wanted.update(PLAN_ACTIONS[a])
    return [p for p in _all_probes(t) if wanted is None or p.action in wanted]


def _all_probes(t: Targets) -> list[Probe]:
    ns = f"/api/v1/namespaces/{t.namespace}"
    dry = (("dryRun", "All"),)
    return [
        Probe("list_pods", "GET", f"{ns}/pods"),
        Probe("get_pod", "GET", f"{ns}/pods/{t.pod}"),
        Probe("read_logs", "GET", f"{ns}/pods/{t.pod}/log", (("tailLines", "5"),)),
        Probe("list_secrets", "GET", f"{ns}/secrets"),
        Probe("get_secret", "GET", f"{ns}/secrets/{t.secret}"),
        Probe("list_configmaps", "GET", f"{ns}/configmaps"),
        Probe("get_artifact_index", "GET", f"{ns}/configmaps/{t.artifact_config_map}"),
        Probe("create_pod", "POST", f"{ns}/pods", dry, "pod"),
        Probe("patch_quota", "PATCH", f"{ns}/resourcequotas/{t.quota}", dry, "quota"),
        Probe("scale_service", "PATCH", f"/apis/apps/v1/namespaces/{t.namespace}/deployments/{t.deployment}/scale",
              dry, "scale"),
        Probe("patch_service", "PATCH", f"{ns}/services/{t.service}", dry, "label"),
        Probe("proxy_service", "GET", f"{ns}/services/{t.service}/proxy/healthz"),
    ]


def discover_targets(admin: KubeCaller, namespace: str) -> Targets:
    """Real object names in ``namespace`` (listed as the administrator); placeholders where there are none."""
    def first(resource: str, prefer: Callable[[dict], bool] = lambda o: True) -> str | None:
        r = admin.call("GET", f"/api/v1/namespaces/{namespace}/{resource}")
        items = (r.body or {}).get("items") or [] if r.ok else []
        items = sorted(items, key=lambda o: (not prefer(o), o["metadata"]["name"]))
        return items[0]["metadata"]["name"] if items else None

    def first_of(api: str, resource: str) -> str | None:
        r = admin.call("GET", f"{api}/namespaces/{namespace}/{resource}")
        names = sorted(o["metadata"]["name"] for o in ((r.body or {}).get("items") or [] if r.ok else []))
        return names[0] if names else None

    started = lambda p: (p.get("status") or {}).get("phase") in ("Running", "Succeeded", "Failed")  # noqa: E731
    kw = {k: v for k, v in (("pod", first("pods", started)), ("secret", first("secrets")),
                            ("quota", first("resourcequotas")), ("deployment", first_of("/apis/apps/v1", "deployments")),
                            ("service", first_of("/api/v1", "services"))) if v}
    return Targets(namespace, **kw)


def probe_pod(namespace: str, actor: str) -> dict:
    """A pod that asks for nothing: the create attempt tests RBAC, not quota or capacity."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"isolation-probe-{actor}"[:63].rstrip("-"), "namespace": namespace,
                         "labels": {PROBE_LABEL: "isolation"}},
            "spec": {"restartPolicy": "Never", "containers": [
                {"name": "base", "image": "busybox:1.36", "command": ["true"]}]}}


def rbac_denied(r: Response) -> bool | None:
    """True for an authorization denial, False when authorization let the request through, None if unknown.

    A 404 or 422 comes after authorization (allowed); a 403 from quota admission is allowed by RBAC too.
    """
    if r.status in (401, 403):
        return "exceeded quota" not in r.message
    if r.status == 0 or r.status >= 500:
        return None
    return False


def subject_access_review(admin: KubeCaller, actor: Actor, method: str, path: str,
                          query: Iterable = ()) -> tuple[bool | None, str]:
    """(allowed, reason) the platform's access review gives for ``actor`` making this request."""
    info = request_info(method, path, list(query))
    attrs = {"namespace": info.namespace, "verb": info.verb, "group": info.api_group, "resource": info.resource}
    if info.subresource:
        attrs["subresource"] = info.subresource
    if info.name:
        attrs["name"] = info.name
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": actor.username, "groups": list(actor.groups), "resourceAttributes": attrs}}
    r = admin.call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body=body)
    if not r.ok or not isinstance(r.body, dict):
        return None, f"access review not available: HTTP {r.status} {r.message}"
    st = r.body.get("status") or {}
    return bool(st.get("allowed")), str(st.get("reason") or st.get("evaluationError") or "")


def attempt(actor_caller: KubeCaller, admin: KubeCaller, actor: Actor, target: Targets, probe: Probe,
            quota_gpus: str = "", access_review: bool = True) -> AccessAttempt:
    """Make one cross-tenant request as the actor, ask the access review, and undo any effect."""
    body = None
    if probe.body_kind == "pod":
        body = probe_pod(target.namespace, actor.context)
    elif probe.body_kind == "quota":
        raised = str(int(quota_gpus) + 8) if quota_gpus.isdigit() else "1000"
        body = {"spec": {"hard": {GPU_QUOTA_KEY: raised}}}
    elif probe.body_kind == "scale":
        body = {"spec": {"replicas": 0}}  # another tenant's service scaled to nothing
    elif probe.body_kind == "label":
        body = {"metadata": {"labels": {PROBE_LABEL: f"patched-by-{actor.context}"[:63]}}}
    info = request_info(probe.method, probe.path, list(probe.query))
    before = _replicas(admin, probe.path) if probe.body_kind == "scale" else None
    at = utcnow()
    r = actor_caller.call(probe.method, probe.path, query=list(probe.query), body=body)
    denied = rbac_denied(r)
    sar_allowed, sar_reason = (subject_access_review(admin, actor, probe.method, probe.path, probe.query)
                               if access_review else (None, "access review not asked (plan)"))
    row = AccessAttempt(
        actor=actor.context, actor_username=actor.username, actor_namespace=actor.namespace or "",
        target_namespace=target.namespace, action=probe.action, verb=info.verb, resource=info.resource,
        subresource=info.subresource, name=info.name or ((body or {}).get("metadata") or {}).get("name", ""),
        at=rfc3339(at), http_status=r.status, allowed=None if denied is None else not denied, message=r.message,
        sar_allowed=sar_allowed, sar_reason=sar_reason)
    if row.allowed is not None and sar_allowed is not None:
        row.sar_agrees = row.allowed == sar_allowed
    if row.allowed:
        row.severity = P1
        row.finding = (f"{actor.username} could {info.verb} {info.resource}"
                       f"{'/' + info.subresource if info.subresource else ''} in {target.namespace} "
                       f"(HTTP {r.status}): cross-tenant access")
        _undo(admin, probe, target, r, quota_gpus, before)
    elif row.allowed is None:
        row.finding = f"not verified: HTTP {r.status} proves neither access nor denial ({r.message})"
    elif sar_allowed:
        row.finding = "access review says allowed but the request was denied: policy and enforcement disagree"
    return row


def _replicas(admin: KubeCaller, scale_path: str) -> int | None:
    """The Deployment's replicas, read from the Deployment itself (the runner may get Deployments, not scales)."""
    r = admin.call("GET", scale_path.removesuffix("/scale"))
    return ((r.body or {}).get("spec") or {}).get("replicas") if r.ok and isinstance(r.body, dict) else None


def _undo(admin: KubeCaller, probe: Probe, target: Targets, r: Response, quota_gpus: str,
          replicas: int | None = None) -> None:
    """Revert an allowed write whose dry run the platform did not honour (checked on the stored object)."""
    if not r.ok or not isinstance(r.body, dict):
        return
    if probe.body_kind == "scale" and replicas is not None and _replicas(admin, probe.path) != replicas:
        admin.call("PATCH", probe.path, body={"spec": {"replicas": replicas}})
    elif probe.body_kind == "label":
        admin.call("PATCH", probe.path, body={"metadata": {"labels": {PROBE_LABEL: None}}})
    if probe.body_kind == "pod":
        path = f"/api/v1/namespaces/{target.namespace}/pods/{(r.body.get('metadata') or {}).get('name', '')}"
        if admin.call("GET", path).ok:
            admin.call("DELETE", path, body={"gracePeriodSeconds": 0})
    elif probe.body_kind == "quota" and quota_gpus:
        stored = admin.call("GET", probe.path)
        now = (((stored.body or {}).get("spec") or {}).get("hard") or {}).get(GPU_QUOTA_KEY) if stored.ok else None
        if now is not None and now != quota_gpus:
            admin.call("PATCH", probe.path, body={"spec": {"hard": {GPU_QUOTA_KEY: quota_gpus}}})


def run_isolation_probes(callers: Callable[[str], KubeCaller], admin_context: str, actors: list[Actor],
                         targets: dict[str, Targets] | None = None,
                         target_namespaces: list[str] | None = None, actions: Iterable[str] | None = None,
                         pairs: Iterable[tuple[str, str]] | None = None,
                         access_review: bool = True) -> list[AccessAttempt]:
    """Every probe for every ordered pair (actor, target) of tenants, each with the actor's own token.

    Targets are the actors' namespaces plus ``target_namespaces`` (tenants without a token in the plan);
    ``pairs`` limits them to (actor context, target namespace) pairs; ``actions`` to the plan's probe actions.
    """
    admin = callers(admin_context)
    namespaces = list(dict.fromkeys([a.namespace for a in actors if a.namespace] + list(target_namespaces or [])))
    targets = dict(targets or {})
    for ns in namespaces:
        targets.setdefault(ns, discover_targets(admin, ns))
    wanted_pairs = set(pairs) if pairs is not None else None
    rows: list[AccessAttempt] = []
    for actor in actors:
        caller = callers(actor.context)
        for ns in namespaces:
            if ns == actor.namespace or (wanted_pairs is not None and (actor.context, ns) not in wanted_pairs):
                continue
            t = targets[ns]
            q = admin.call("GET", f"/api/v1/namespaces/{ns}/resourcequotas/{t.quota}")
            gpus = str((((q.body or {}).get("spec") or {}).get("hard") or {}).get(GPU_QUOTA_KEY, "")) if q.ok else ""
            for probe in probes_for(t, actions):
                rows.append(attempt(caller, admin, actor, t, probe, gpus, access_review))
    return rows


def attach_audit(rows: list[AccessAttempt], audit_events: list[dict], skew_s: float = 5.0,
                 window_s: float = 60.0) -> list[AccessAttempt]:
    """Match each denied attempt to an audit event with decision forbid; unmatched denials are findings."""
    used: set[str] = set()
    for row in rows:
        if row.allowed is not False:
            continue
        ev = find_audit_event(audit_events, username=row.actor_username, verb=row.verb, resource=row.resource,
                              subresource=row.subresource, namespace=row.target_namespace,
                              name=row.name if row.verb != "create" else "", at=parse_time(row.at),
                              decision="forbid", skew_s=skew_s, window_s=window_s, used=used)
        row.audit_matched = ev is not None
        row.audit_id = (ev or {}).get("auditID", "")
        if ev is None and not row.finding:
            row.finding = "denied, but no audit event with decision forbid records the attempt"
    return rows

