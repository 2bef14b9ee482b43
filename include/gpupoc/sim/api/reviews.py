"""authorization.k8s.io: SelfSubjectAccessReview, SubjectAccessReview, SelfSubjectRulesReview."""

from __future__ import annotations

from aiohttp import web

from gpupoc.sim import rbac
from gpupoc.sim.api.context import Ctx, json_response
from gpupoc.sim.api.registry import ResourceSpec
from gpupoc.sim.api.status import bad_request, invalid

GROUP_VERSION = "authorization.k8s.io/v1"


def review_attributes(spec: dict, user: str, groups: tuple[str, ...]) -> rbac.Attributes:
    ra = spec.get("resourceAttributes")
    if ra:
        return rbac.Attributes(user=user, groups=groups, verb=ra.get("verb", ""), namespace=ra.get("namespace", ""),
                               api_group=ra.get("group", ""), api_version=ra.get("version", ""),
                               resource=ra.get("resource", ""), subresource=ra.get("subresource", ""),
                               name=ra.get("name", ""))
    nra = spec.get("nonResourceAttributes") or {}
    return rbac.Attributes(user=user, groups=groups, verb=nra.get("verb", ""), path=nra.get("path", ""),
                           resource_request=False)


def decide(ctx: Ctx, attrs: rbac.Attributes) -> dict:
    d = ctx.state.reactors.authorize(ctx.state.store, attrs)
    out = {"allowed": d.allowed}
    if d.reason:
        out["reason"] = d.reason
    return out


async def create_review(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    body = await ctx.body()
    if not isinstance(body, dict):
        raise bad_request("the body of the request was in an unknown format")
    rspec = body.get("spec") or {}
    caller = ctx.caller
    if spec.plural == "selfsubjectrulesreviews":
        ns = rspec.get("namespace", "")
        rules = rbac.rules_for(ctx.state.store, caller.username, caller.groups, ns)
        status = {
            "resourceRules": [{k: r[k] for k in ("verbs", "apiGroups", "resources", "resourceNames") if r.get(k)}
                              for r in rules if r.get("resources")],
            "nonResourceRules": [{"verbs": r["verbs"], "nonResourceURLs": r["nonResourceURLs"]}
                                 for r in rules if r.get("nonResourceURLs")],
            "incomplete": False,
        }
    elif spec.plural == "selfsubjectaccessreviews":
        status = decide(ctx, review_attributes(rspec, caller.username, caller.groups))
        rspec = {k: v for k, v in rspec.items() if k in ("resourceAttributes", "nonResourceAttributes")}
    else:
        user, groups = rspec.get("user", ""), tuple(rspec.get("groups") or ())
        if not user and not groups:
            raise invalid("SubjectAccessReview", "", [("spec.user", 'Invalid value: "": at least one of user or '
                                                                     "group must be specified")],
                          "authorization.k8s.io")
        status = decide(ctx, review_attributes(rspec, user, groups))
    meta = dict(body.get("metadata") or {})
    meta.setdefault("creationTimestamp", None)
    return json_response({"kind": spec.kind, "apiVersion": GROUP_VERSION, "metadata": meta, "spec": rspec,
                          "status": status}, 201)
