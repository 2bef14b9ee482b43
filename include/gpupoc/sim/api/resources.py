"""Generic handlers for stored resources: get, list, create, update (PUT), patch, delete, status subresource."""

from __future__ import annotations

import base64
import json
from typing import Callable

from aiohttp import web

from gpupoc.common import fastjson
from gpupoc.sim import clock, tables
from gpupoc.sim.admission import DNS_LABEL, DNS_SUBDOMAIN, generate_name
from gpupoc.sim.api import defaults, shapes
from gpupoc.sim.api.context import Ctx, dry_run, int_param, json_response
from gpupoc.sim.api.indexes import event_index
from gpupoc.sim.api.registry import ResourceSpec, list_kind
from gpupoc.sim.api.status import StatusError, already_exists, bad_request, conflict, invalid, not_found, success_obj
from gpupoc.sim.patch import APPLY, PatchError, apply_patch
from gpupoc.sim.selectors import Selector, SelectorError
from gpupoc.sim.store import Conflict

STATUS_RESOURCES = ("pods", "nodes", "namespaces", "resourcequotas", "workloads", "clusterqueues", "localqueues")
PRESERVED_META = ("uid", "creationTimestamp", "namespace", "name", "deletionTimestamp", "deletionGracePeriodSeconds",
                  "generateName")

# resource -> validator(old, new) raising StatusError; registered by resource modules (pods).
UPDATE_VALIDATORS: dict[str, Callable[[dict, dict], None]] = {}


def _has_status(spec: ResourceSpec) -> bool:
    """Whether the resource has a status subresource (writes to the main resource keep its status)."""
    return spec.plural in STATUS_RESOURCES or "status" in spec.subresources


def selector_of(ctx: Ctx, resource: str) -> Selector:
    try:
        return Selector.parse(resource, ctx.query.get("labelSelector"), ctx.query.get("fieldSelector"))
    except SelectorError as exc:
        raise bad_request(str(exc)) from None


def fetch(ctx: Ctx, spec: ResourceSpec) -> dict:
    obj = ctx.state.store.get(spec.plural, ctx.info.namespace if spec.namespaced else None, ctx.info.name)
    if obj is None:
        raise not_found(spec.plural, ctx.info.name, spec.group)
    return obj


def answer_object(ctx: Ctx, spec: ResourceSpec, obj: dict, status: int = 200) -> web.Response:
    """One object in the form the request's Accept asks: a Table (a get), its metadata only (the audit log then
    keeps that too), else the whole object."""
    if ctx.wants_table() and status == 200:
        return json_response(tables.to_table(spec.plural, [obj], obj["metadata"].get("resourceVersion", ""),
                                             ctx.query.get("includeObject", "Metadata")))
    if ctx.wants_metadata():
        return json_response(tables.partial_metadata(obj), status)
    return json_response(obj, status)


async def get_obj(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    return answer_object(ctx, spec, fetch(ctx, spec))


def matching(ctx: Ctx, spec: ResourceSpec, sel: Selector, ordered: bool = True) -> list[dict]:
    """The objects the request's namespace and ``sel`` select, sorted by namespace and name unless not
    ``ordered``."""
    store = ctx.state.store
    ns = ctx.info.namespace if spec.namespaced else None
    name = sel.exact_name()
    involved = next((v for f, op, v in sel.fields if f == "involvedObject.name" and op == "="), None)
    if spec.plural == "events" and involved is not None:
        objs = event_index(ctx.state).events_about(ns or None, involved)
    elif name is not None:
        if spec.namespaced and not ns:
            objs = [o for o in store.list(spec.plural) if o["metadata"]["name"] == name]
        else:
            one = store.get(spec.plural, ns, name)
            objs = [one] if one is not None else []
    else:
        objs = store.list(spec.plural, ns, ordered)
    return objs if sel.empty else [o for o in objs if sel.matches(o)]


def paginate(ctx: Ctx, objs: list[dict], rv: str) -> tuple[list[dict], dict]:
    """``limit``/``continue``: a page of the (namespace, name)-sorted list and the list metadata."""
    token = ctx.query.get("continue")
    if token:
        try:
            state = json.loads(base64.urlsafe_b64decode(token.encode()))
            after, rv = tuple(state["after"]), state["rv"]
        except (ValueError, KeyError, TypeError):
            raise StatusError(400, "continue key is not valid: the continue token could not be decoded",
                              "BadRequest") from None
        objs = [o for o in objs if (o["metadata"].get("namespace", ""), o["metadata"]["name"]) > after]
    meta: dict = {"resourceVersion": rv}
    limit = int_param(ctx.query, "limit", 0) or 0
    if limit > 0 and len(objs) > limit:
        last = objs[limit - 1]["metadata"]
        after = [last.get("namespace", ""), last["name"]]
        meta["continue"] = base64.urlsafe_b64encode(json.dumps({"rv": rv, "after": after}).encode()).decode()
        meta["remainingItemCount"] = len(objs) - limit
        objs = objs[:limit]
    return objs, meta


async def list_objs(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    sel = selector_of(ctx, spec.plural)
    objs, meta = paginate(ctx, matching(ctx, spec, sel), str(ctx.state.store.rv))
    return answer_list(ctx, spec, objs, meta)


def answer_list(ctx: Ctx, spec: ResourceSpec, objs: list[dict], meta: dict) -> web.Response:
    """A list of ``objs`` in the form the request's Accept asks: a Table, a PartialObjectMetadataList (each
    item's metadata only: also what the audit log keeps of a deletecollection's answer), else the whole list."""
    if ctx.wants_table():
        return json_response(tables.to_table(spec.plural, objs, meta["resourceVersion"],
                                             ctx.query.get("includeObject", "Metadata"),
                                             {k: v for k, v in meta.items() if k != "resourceVersion"}))
    if ctx.wants_metadata_list():
        return json_response(tables.partial_metadata_list(objs, meta))
    return json_response({"kind": list_kind(spec), "apiVersion": spec.group_version, "metadata": meta,
                          "items": objs})


def _check_body(ctx: Ctx, spec: ResourceSpec, body: object) -> dict:
    if not isinstance(body, dict):
        raise bad_request("the body of the request was in an unknown format - accepted media types include: "
                          "application/json, application/yaml")
    shapes.check(spec.kind, body)
    kind = body.get("kind")
    if kind and kind != spec.kind:
        raise bad_request(f"the API version in the data ({body.get('apiVersion')}) does not match the expected API "
                          f"version ({spec.group_version}) or kind {kind!r} is not {spec.kind!r}")
    meta = body.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise bad_request("metadata: expected an object")
    if spec.namespaced:
        if meta.get("namespace") and meta["namespace"] != ctx.info.namespace:
            raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
        meta["namespace"] = ctx.info.namespace
    return body


async def create_obj(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    body = _check_body(ctx, spec, await ctx.body())
    meta = body["metadata"]
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = generate_name(meta["generateName"])
    if not meta.get("name"):
        raise invalid(spec.kind, "", [("metadata.name", "Required value: name or generateName is required")],
                      spec.group)
    pattern, what = (DNS_LABEL, "label") if spec.plural == "namespaces" else (DNS_SUBDOMAIN, "subdomain")
    if not pattern.match(meta["name"]) or len(meta["name"]) > 253:
        raise invalid(spec.kind, meta["name"], [("metadata.name", f'Invalid value: "{meta["name"]}": a lowercase '
                                                 f"RFC 1123 {what} must consist of lower case alphanumeric "
                                                 "characters, '-' or '.', and must start and end with an "
                                                 "alphanumeric character")], spec.group)
    if spec.namespaced and ctx.state.store.get("namespaces", None, ctx.info.namespace) is None:
        raise not_found("namespaces", ctx.info.namespace)
    for k in ("resourceVersion", "uid", "creationTimestamp", "deletionTimestamp"):
        meta.pop(k, None)
    if spec.plural == "resourcequotas":
        body["status"] = {"hard": dict((body.get("spec") or {}).get("hard") or {}), "used": {}}
    ctx.audit.name = meta["name"]  # the audit event names the object created (dry runs too), as LogRequestObject
    defaults.on_create(ctx.state, spec.plural, body)
    if dry_run(ctx.query):
        if ctx.state.store.get(spec.plural, ctx.info.namespace if spec.namespaced else None, meta["name"]):
            raise already_exists(spec.plural, meta["name"], spec.group)
        return json_response(body, 201)
    try:
        obj = ctx.state.store.create(spec.plural, body)
    except Conflict:
        raise already_exists(spec.plural, meta["name"], spec.group) from None
    ctx.state.kick()
    return answer_object(ctx, spec, obj, 201)


def _commit(ctx: Ctx, spec: ResourceSpec, cur: dict, new: dict, status_only: bool) -> dict:
    """Replace ``cur`` in place by ``new`` (its shape already checked by the caller) keeping server-owned fields,
    then record the change."""
    new_meta = new.setdefault("metadata", {})
    if new_meta.get("name") and new_meta["name"] != cur["metadata"]["name"]:
        raise bad_request(f"the name of the object ({new_meta['name']}) does not match the name on the URL "
                          f"({cur['metadata']['name']})")
    want_rv = new_meta.get("resourceVersion")
    if want_rv and want_rv != cur["metadata"].get("resourceVersion"):
        raise conflict(spec.plural, cur["metadata"]["name"], spec.group)
    if status_only:
        merged = fastjson.copy(cur)
        merged["status"] = new.get("status", cur.get("status"))
    else:
        merged = new
        for k in PRESERVED_META:
            if k in cur["metadata"]:
                new_meta[k] = cur["metadata"][k]
            else:
                new_meta.pop(k, None)
        if _has_status(spec) and "status" in cur:
            merged["status"] = fastjson.copy(cur["status"])
        merged["apiVersion"], merged["kind"] = cur.get("apiVersion"), cur.get("kind")
        defaults.on_update(spec.plural, cur, merged)
        validator = UPDATE_VALIDATORS.get(spec.plural)
        if validator:
            validator(cur, merged)
    if merged == cur or dry_run(ctx.query):
        return merged
    cur.clear()
    cur.update(merged)
    ctx.state.store.update(spec.plural, cur)
    ctx.state.kick()
    return cur


async def update_obj(ctx: Ctx, spec: ResourceSpec, status_only: bool = False) -> web.Response:
    cur = fetch(ctx, spec)
    body = _check_body(ctx, spec, await ctx.body())
    return answer_object(ctx, spec, _commit(ctx, spec, cur, body, status_only))


async def patch_obj(ctx: Ctx, spec: ResourceSpec, status_only: bool = False) -> web.Response:
    ct = ctx.request.headers.get("Content-Type", "")
    if ct.startswith(APPLY):
        raise StatusError(415, "the body of the request was in an unknown format - accepted media types include: "
                               "application/json-patch+json, application/merge-patch+json, "
                               "application/strategic-merge-patch+json", "UnsupportedMediaType")
    cur = fetch(ctx, spec)
    patch = await ctx.body()
    if patch is None:
        raise bad_request("the body of the request was empty")
    try:
        new = apply_patch(ct, cur, patch)
    except PatchError as exc:
        if "unsupported patch content type" in str(exc):
            raise StatusError(415, "the body of the request was in an unknown format - accepted media types include: "
                                   "application/json-patch+json, application/merge-patch+json, "
                                   "application/strategic-merge-patch+json", "UnsupportedMediaType") from None
        raise StatusError(422, str(exc), "Invalid") from None
    shapes.check(spec.kind, new)
    if not status_only and _has_status(spec):
        new["status"] = cur.get("status")  # ``_commit`` keeps a copy of the stored status
    new_meta = new.get("metadata") or {}
    patch_rv = ((patch.get("metadata") or {}).get("resourceVersion") if isinstance(patch, dict) else None)
    if not patch_rv:
        new_meta.pop("resourceVersion", None)
    ctx.audit.request_object = patch
    return answer_object(ctx, spec, _commit(ctx, spec, cur, new, status_only))


async def delete_obj(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    obj = fetch(ctx, spec)
    ctx.state.store.delete(spec.plural, obj["metadata"].get("namespace"), obj["metadata"]["name"])
    ctx.state.kick()
    if spec.plural == "namespaces":
        obj["status"] = {"phase": "Terminating"}
        obj["metadata"]["deletionTimestamp"] = clock.rfc3339()
        return json_response(obj)
    return json_response(success_obj({"name": obj["metadata"]["name"], "group": spec.group, "kind": spec.plural,
                                      "uid": obj["metadata"]["uid"]}))


async def delete_collection(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    sel = selector_of(ctx, spec.plural)
    deleted = []
    for obj in list(matching(ctx, spec, sel)):
        ctx.state.store.delete(spec.plural, obj["metadata"].get("namespace"), obj["metadata"]["name"])
        deleted.append(obj)
    ctx.state.kick()
    return answer_list(ctx, spec, deleted, {"resourceVersion": str(ctx.state.store.rv)})
