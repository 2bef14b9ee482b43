"""The ``scale`` subresource of Deployments and ReplicaSets (``autoscaling/v1`` Scale), as ``kubectl scale`` and
autoscalers read and write it (kubernetes ``pkg/registry/apps/deployment/storage/storage.go`` ``ScaleREST``,
``scaleFromDeployment``: ``spec.replicas``, ``status.replicas`` and ``status.selector`` as label-selector text)."""

from __future__ import annotations

from aiohttp import web

from gpupoc.sim.api import defaults
from gpupoc.sim.api.context import Ctx, dry_run, json_response
from gpupoc.sim.api.registry import ResourceSpec
from gpupoc.sim.api.resources import fetch
from gpupoc.sim.api.service_defaults import match_labels_selector
from gpupoc.sim.api.status import StatusError, bad_request, conflict, invalid
from gpupoc.sim.patch import PatchError, apply_patch
from gpupoc.sim.store import json_copy


def scale_of(obj: dict) -> dict:
    """The Scale object of a Deployment or ReplicaSet."""
    meta = obj["metadata"]
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in meta},
            "spec": {"replicas": int((obj.get("spec") or {}).get("replicas", 1))},
            "status": {"replicas": int((obj.get("status") or {}).get("replicas") or 0),
                       "selector": match_labels_selector((obj.get("spec") or {}).get("selector"))}}


async def scale(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    """GET, PUT or PATCH ``.../{name}/scale``."""
    obj = fetch(ctx, spec)
    current = scale_of(obj)
    if ctx.info.verb == "get":
        return json_response(current)
    body = await ctx.body()
    if body is None:
        raise bad_request("the body of the request was empty")
    if ctx.info.verb == "patch":
        try:
            wanted = apply_patch(ctx.request.headers.get("Content-Type", ""), json_copy(current), body)
        except PatchError as exc:
            raise StatusError(422, str(exc), "Invalid") from None
    else:
        wanted = body
        want_rv = ((body.get("metadata") or {}) if isinstance(body, dict) else {}).get("resourceVersion")
        if want_rv and want_rv != obj["metadata"].get("resourceVersion"):
            raise conflict(spec.plural, obj["metadata"]["name"], spec.group)
    replicas = ((wanted or {}).get("spec") or {}).get("replicas") if isinstance(wanted, dict) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise invalid("Scale", obj["metadata"]["name"], [("spec.replicas", f"Invalid value: {replicas!r}: must be "
                                                          "greater than or equal to 0")], "autoscaling")
    ctx.audit.request_object = body
    if not dry_run(ctx.query) and replicas != obj["spec"].get("replicas"):
        old = json_copy(obj)
        obj["spec"]["replicas"] = replicas
        defaults.on_update(spec.plural, old, obj)
        ctx.state.store.update(spec.plural, obj)
        ctx.state.kick()
    return json_response(scale_of(obj) if not dry_run(ctx.query) else {**current, "spec": {"replicas": replicas}})
