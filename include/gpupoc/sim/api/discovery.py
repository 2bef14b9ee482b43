"""Discovery: /version, /api, /api/v1, /apis, /apis/{group}[/{version}], health checks."""

from __future__ import annotations

from aiohttp import web

from gpupoc.sim.api import openapi
from gpupoc.sim.api.context import Ctx, json_response
from gpupoc.sim.api.registry import group_versions, resources_of
from gpupoc.sim.api.status import StatusError
from gpupoc.sim.cluster import ClusterState

HEALTH_PATHS = ("/healthz", "/livez", "/readyz")
SUBRESOURCE_KINDS = {"pendingworkloads": ("PendingWorkloadsSummary", None), "eviction": ("Eviction", "policy")}


def version_info(state: ClusterState) -> dict:
    v = state.config.kubernetes_version.lstrip("v")
    major, minor = v.split(".")[:2]
    return {"major": major, "minor": minor, "gitVersion": state.config.kubernetes_version,
            "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
            "buildDate": "2024-12-10T11:36:23Z", "goVersion": "go1.22.9", "compiler": "gc",
            "platform": "linux/amd64"}


def resource_list(group: str, version: str, mode=None) -> dict:
    """APIResourceList of one group/version (as served in scheduler ``mode``), subresources listed as ``pods/log``."""
    out = []
    for s in resources_of(group, version, mode):
        if s.verbs:
            entry = {"name": s.plural, "singularName": s.singular, "namespaced": s.namespaced, "kind": s.kind,
                     "verbs": sorted(s.verbs)}
            if s.short_names:
                entry["shortNames"] = list(s.short_names)
            if s.categories:
                entry["categories"] = list(s.categories)
            out.append(entry)
        for sub, verbs in s.subresources.items():
            kind = SUBRESOURCE_KINDS.get(sub, (s.kind, None))
            entry = {"name": f"{s.plural}/{sub}", "singularName": "", "namespaced": s.namespaced, "kind": kind[0],
                     "verbs": sorted(verbs)}
            if kind[1]:
                entry.update(group=kind[1], version="v1")
            out.append(entry)
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{group}/{version}" if group else version,
            "resources": out}


def api_group(name: str, versions: list[str]) -> dict:
    gvs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": gvs, "preferredVersion": gvs[0]}


async def discovery(ctx: Ctx) -> web.Response:
    """Answer the discovery documents; anything else here is 404 like the API server."""
    info, path = ctx.info, ctx.info.path.rstrip("/")
    if path == "/version":
        return json_response(version_info(ctx.state))
    if path == "/api":
        host = ctx.request.host
        return json_response({"kind": "APIVersions", "versions": ["v1"],
                              "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}]})
    mode = ctx.state.mode
    if path == "/api/v1":
        return json_response(resource_list("", "v1", mode))
    if path == "/openapi/v3":
        return json_response(openapi.root(mode))
    if path.startswith("/openapi/v3/"):
        doc = openapi.document(path, mode)
        if doc is not None:
            return json_response(doc)
    groups = group_versions(mode)
    if path == "/apis":
        return json_response({"kind": "APIGroupList", "apiVersion": "v1",
                              "groups": [api_group(g, vs) for g, vs in groups.items()]})
    parts = path.strip("/").split("/")
    if parts[0] == "apis" and len(parts) == 2 and parts[1] in groups:
        return json_response({"kind": "APIGroup", "apiVersion": "v1", **api_group(parts[1], groups[parts[1]])})
    if parts[0] == "apis" and len(parts) == 3 and parts[2] in groups.get(parts[1], []):
        return json_response(resource_list(parts[1], parts[2], mode))
    del info
    raise StatusError(404, "the server could not find the requested resource", "NotFound", {})
