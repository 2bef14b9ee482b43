"""The aiohttp application: authentication, impersonation, RBAC, dispatch, audit, and error answers."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from gpupoc.common import fastjson
from gpupoc.sim import clock, rbac
from gpupoc.sim.api import (
    admin, discovery, events_v1, pod_logs, pods, resources, reviews, scale, service_proxy, tokens, visibility, watch)
from gpupoc.sim.api.context import Caller, Ctx, error_response, json_response, parse_request_info
from gpupoc.sim.api.manners import MANNERS, ApiManners
from gpupoc.sim.api.registry import APPS, AUTHN, AUTHZ, EVENTS, SIM, VISIBILITY, ResourceSpec, lookup
from gpupoc.sim.api.status import StatusError, unauthorized
from gpupoc.sim.audit import MUTATING, REQUEST_RESPONSE, AuditLog, AuditRecord
from gpupoc.sim.cluster import ClusterState

log = logging.getLogger(__name__)

STATE = web.AppKey("state", ClusterState)
AUDIT = web.AppKey("audit", AuditLog)

_GENERIC = {
    "get": resources.get_obj,
    "list": resources.list_objs,
    "watch": watch.watch,
    "create": resources.create_obj,
    "update": resources.update_obj,
    "patch": resources.patch_obj,
    "delete": resources.delete_obj,
    "deletecollection": resources.delete_collection,
}
_SPECIAL = {
    ("", "pods", "create", ""): pods.create_pod,
    ("", "pods", "delete", ""): pods.delete_pod,
    ("", "pods", "deletecollection", ""): pods.delete_pods,
    ("", "namespaces", "delete", ""): pods.delete_namespace,
    ("", "pods", "get", "log"): pod_logs.pod_log,
    ("", "pods", "create", "eviction"): pods.evict_pod,
    (VISIBILITY, "clusterqueues", "get", "pendingworkloads"): visibility.pending_workloads,
    (VISIBILITY, "localqueues", "get", "pendingworkloads"): visibility.pending_workloads,
    ("", "serviceaccounts", "create", "token"): tokens.create_token,
    (AUTHN, "selfsubjectreviews", "create", ""): tokens.self_subject_review,
    (EVENTS, "events", "list", ""): events_v1.list_events,
    (EVENTS, "events", "get", ""): events_v1.get_event,
    **{(APPS, kind, verb, "scale"): scale.scale for kind in ("deployments", "replicasets")
       for verb in ("get", "update", "patch")},
    **{("", kind, verb, "proxy"): service_proxy.proxy for kind in ("services", "pods")
       for verb in ("get", "create", "update", "patch", "delete")},
    (SIM, "nodes", "create", "fail"): admin.node_action,
    (SIM, "nodes", "create", "recover"): admin.node_action,
    (SIM, "nodes", "create", "stop-kubelet"): admin.node_action,
    (SIM, "nodes", "create", "start-kubelet"): admin.node_action,
}
NOT_FOUND = "the server could not find the requested resource"


def build_app(state: ClusterState, audit: AuditLog | None = None) -> web.Application:
    """One catch-all route: the path is parsed like the API server's RequestInfoFactory does."""
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app[STATE] = state
    if audit is not None:
        state.audit = audit  # the controllers' own writes go to the same log
    app[AUDIT] = state.audit
    app[MANNERS] = ApiManners.of(state)
    app.router.add_route("*", "/{tail:.*}", handle)

    async def _close_audit(app: web.Application) -> None:
        app[AUDIT].close()

    app.on_cleanup.append(_close_audit)
    return app


def authenticate(ctx: Ctx) -> Caller:
    """Bearer token -> identity; ``Impersonate-User``/``-Group`` when the identity may impersonate."""
    header = ctx.request.headers.get("Authorization", "")
    if not header.lower().startswith("bearer "):
        raise unauthorized()
    token = header[7:].strip()
    ident = ctx.state.identities.get(token) or tokens.authenticate(ctx.state, token)
    if ident is None:
        raise unauthorized()
    caller = Caller(ident.username, tuple(ident.groups), ident.uid, ident.namespace, extra=ident.extra)
    ctx.audit.user = caller.as_user_info()
    imp_user = ctx.request.headers.get("Impersonate-User")
    imp_groups = ctx.request.headers.getall("Impersonate-Group", [])
    if not imp_user and not imp_groups:
        return caller
    for resource, name in [("users", imp_user)] * bool(imp_user) + [("groups", g) for g in imp_groups]:
        attrs = rbac.Attributes(user=caller.username, groups=caller.groups, verb="impersonate", resource=resource,
                                name=name)
        if not rbac.authorize(ctx.state.store, attrs).allowed:
            ctx.audit.decision = "forbid"
            raise StatusError(403, f'{resource} "{name}" is forbidden: User "{caller.username}" cannot impersonate '
                                   f'resource "{resource}" in API group "" at the cluster scope', "Forbidden",
                              {"name": name, "kind": resource})
    username = imp_user or caller.username
    groups = list(imp_groups)
    namespace = None
    if username.startswith(rbac.SA_PREFIX):
        namespace = username[len(rbac.SA_PREFIX):].split(":", 1)[0]
        for g in ("system:serviceaccounts", f"system:serviceaccounts:{namespace}"):
            if g not in groups:
                groups.append(g)
    if username != "system:anonymous" and "system:authenticated" not in groups:
        groups.append("system:authenticated")
    out = Caller(username, tuple(groups), "", namespace, impersonated_by=caller.as_user_info())
    ctx.audit.impersonated = {"username": username, "groups": list(groups)}
    return out


def authorize(ctx: Ctx) -> None:
    info, caller = ctx.info, ctx.caller
    attrs = rbac.Attributes(user=caller.username, groups=caller.groups, **info.request_attributes().model_dump(),
                            api_version=info.api_version, path=info.path, resource_request=info.resource_request)
    decision = ctx.state.reactors.authorize(ctx.state.store, attrs)
    ctx.audit.decision = "allow" if decision.allowed else "forbid"
    ctx.audit.reason = decision.reason
    if not decision.allowed:
        st = rbac.forbidden_status(attrs)
        err = StatusError(403, st["message"], "Forbidden", st.get("details"))
        raise err


async def dispatch(ctx: Ctx) -> web.StreamResponse:
    info = ctx.info
    if not info.resource_request:
        return await discovery.discovery(ctx)
    spec: ResourceSpec | None = lookup(info.api_group, info.api_version, info.resource, ctx.state.mode)
    if spec is None or (not spec.namespaced and info.namespace and info.resource != "namespaces"):
        raise StatusError(404, NOT_FOUND, "NotFound", {})
    verb, sub = info.verb, info.subresource
    if spec.namespaced and not info.namespace and verb not in ("list", "watch"):
        raise StatusError(404, NOT_FOUND, "NotFound", {})
    if sub:
        if sub not in spec.subresources:
            raise StatusError(404, NOT_FOUND, "NotFound", {})
        if verb not in spec.subresources[sub]:
            raise StatusError(405, "the server does not allow this method on the requested resource",
                              "MethodNotAllowed", {})
    elif verb not in spec.verbs:
        raise StatusError(405, "the server does not allow this method on the requested resource",
                          "MethodNotAllowed", {})
    handler = _SPECIAL.get((spec.group, spec.plural, verb, sub))
    if handler is not None:
        return await handler(ctx, spec)
    if spec.group == AUTHZ:
        return await reviews.create_review(ctx, spec)
    if sub == "status":
        if verb == "get":
            return await resources.get_obj(ctx, spec)
        if verb == "update":
            return await resources.update_obj(ctx, spec, status_only=True)
        return await resources.patch_obj(ctx, spec, status_only=True)
    return await _GENERIC[verb](ctx, spec)


def _public(request: web.Request) -> web.StreamResponse | None:
    """What system:public-info-viewer may see without a token: health checks and /version."""
    health = discovery.HEALTH_PATHS
    if request.path in health or request.path.startswith(tuple(p + "/" for p in health)):
        return web.Response(text="ok", content_type="text/plain")
    if request.path == "/version" and request.method == "GET":
        return json_response(discovery.version_info(request.app[STATE]))
    return None


async def handle(request: web.Request) -> web.StreamResponse:
    """Every request: authenticate, authorize, serve, answer errors as Status, and audit."""
    state = request.app[STATE]
    if request.path in admin.METRICS_PATHS and request.method == "GET":
        return await admin.metrics(request, state, request.path)
    public = _public(request)
    if public is not None:
        return public
    info = parse_request_info(request.method, request.path, request.query)
    if info.verb != "watch":
        state.api_pressure.note_request()  # API first: the controllers step aside during a burst
    rec = AuditRecord(request_uri=request.path_qs, user={}, source_ip=request.remote or "127.0.0.1",
                      user_agent=request.headers.get("User-Agent", ""), received=clock.rfc3339_micro(),
                      **info.request_attributes().model_dump(), api_version=info.api_version)
    ctx = Ctx(request, state, info, rec)
    resp: web.StreamResponse | None = None
    try:
        ctx.caller = authenticate(ctx)
        await _manners(request, ctx)
        authorize(ctx)
        resp = await dispatch(ctx)
        rec.code = resp.status
    except StatusError as exc:
        rec.code, rec.status = exc.code, exc.status
        resp = error_response(exc)
    except asyncio.CancelledError:
        rec.code = rec.code or 200
        raise
    except Exception as exc:  # a handler bug answers 500, never kills the server
        log.exception("internal error serving %s %s", request.method, request.path_qs)
        err = StatusError(500, f"Internal error occurred: {type(exc).__name__}: {exc}", "InternalError")
        rec.code, rec.status = 500, err.status
        resp = ctx.stream if ctx.stream is not None and ctx.stream.prepared else error_response(err)
    finally:
        _audit(request, ctx, resp)
    return resp


async def _manners(request: web.Request, ctx: Ctx) -> None:
    """The API behaviour profiles (``manners``): refuse the request (throttled) or delay it (slow-api)."""
    if ctx.info.api_group == SIM:
        return
    manners = request.app[MANNERS]
    refusal = manners.refusal(ctx.caller.username, request.method, request.path_qs)
    if refusal is not None:
        raise refusal
    delay = manners.latency()
    if delay:
        await asyncio.sleep(delay)


def _audit(request: web.Request, ctx: Ctx, resp: web.StreamResponse | None) -> None:
    rec = ctx.audit
    if rec.code == 401:
        rec.user = {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
    try:
        if rec.verb in MUTATING and rec.resource in REQUEST_RESPONSE and not rec.subresource:
            if rec.request_object is None and ctx._body_read and ctx._raw.strip() and not ctx._protobuf:
                try:
                    rec.request_object = fastjson.loads(ctx._raw)
                except ValueError:
                    rec.request_object = None
            if isinstance(resp, web.Response) and resp.content_type == "application/json" and resp.body:
                rec.response_object = fastjson.loads(resp.body)
        request.app[AUDIT].record(rec)
    except Exception:  # the audit log must never break a request
        log.exception("audit log write failed for %s", rec.request_uri)
