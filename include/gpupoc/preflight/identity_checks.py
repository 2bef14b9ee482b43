"""Every identity authenticates as the plan's ServiceAccount, holds each verb its classes need (asked with
SelfSubjectAccessReview, as ``kubectl auth can-i`` does) and holds no read in another tenant's namespace."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from gpupoc.cluster.access import Need, Scope, Who, needs_for, split_resource
from gpupoc.exceptions import SourceUnavailable
from gpupoc.pipeline.k8s import KubeCaller
from gpupoc.preflight.context import PreflightContext
from gpupoc.preflight.model import CheckResult, failed, ok
from gpupoc.preflight.registry import check

SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
CROSS_TENANT_READS = (("", "pods", "list"), ("", "pods", "get"), ("", "pods/log", "get"), ("", "secrets", "list"),
                      ("", "secrets", "get"), ("", "configmaps", "list"), ("", "configmaps", "get"))


@dataclass(frozen=True)
class IdentityRef:
    """One identity: its context, the ServiceAccount the plan expects, and its kind."""

    context: str
    username: str
    who: Who
    namespace: str
    tenant: str = ""


def identities(ctx: PreflightContext) -> list[IdentityRef]:
    p = ctx.plan
    runner = f"system:serviceaccount:{p.platform.namespace}:{p.cluster.runner_service_account}"
    out = [IdentityRef(ctx.runner_context, runner, Who.RUNNER, p.platform.namespace)]
    out += [IdentityRef(t.kube_context, t.username, Who.TENANT, t.namespace, t.name) for t in ctx.tenants]
    return out


def can(caller: KubeCaller, verb: str, group: str, resource: str, namespace: str) -> tuple[bool, str]:
    """(allowed, the API server's reason or denial) of one SelfSubjectAccessReview."""
    base, sub = split_resource(resource)
    attrs = {"verb": verb, "group": group, "resource": base, **({"subresource": sub} if sub else {}),
             **({"namespace": namespace} if namespace else {})}
    r = caller.call("POST", SSAR, body={"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                                        "spec": {"resourceAttributes": attrs}})
    if not r.ok or not isinstance(r.body, dict):
        return False, f"SelfSubjectAccessReview answered HTTP {r.status}: {r.message}"
    status = r.body.get("status") or {}
    return bool(status.get("allowed")), str(status.get("reason") or status.get("evaluationError") or "")


def each_identity(check_id: str, idents: list, one: Callable[[Any], CheckResult]) -> list[CheckResult]:
    """``one(ident)`` per identity; a rejected token or unreachable endpoint fails that identity only."""
    out = []
    for ident in idents:
        try:
            out.append(one(ident))
        except SourceUnavailable as exc:
            subject = getattr(ident, "context", None) or getattr(ident, "kube_context", "")
            out.append(failed(check_id, subject, exc.reason, "write the kubeconfig again: gpupoc cluster kubeconfig "
                              "--plan PLAN (a deleted ServiceAccount's tokens stop working)"))
    return out


@check("identities.authenticate", "every identity authenticates as the plan's ServiceAccount")
def authenticate(ctx: PreflightContext) -> list[CheckResult]:
    return each_identity("identities.authenticate", identities(ctx), lambda i: _authenticate_one(ctx, i))


def _authenticate_one(ctx: PreflightContext, ident: IdentityRef) -> CheckResult:
    r = ctx.caller(ident.context).call(
        "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    user = ((r.body or {}).get("status") or {}).get("userInfo", {}).get("username") if r.ok else None
    again = "write the kubeconfig again: gpupoc cluster kubeconfig --plan PLAN"
    if r.status == 404:
        return ok("identities.authenticate", ident.context, "authenticated (the server has no SelfSubjectReview, "
                  "Kubernetes < 1.28: the name is not checked)")
    if user == ident.username:
        return ok("identities.authenticate", ident.context, f"authenticates as {user}")
    if user and ident.who is Who.RUNNER:  # an administrator's context instead of the runner's account
        return ok("identities.authenticate", ident.context, f"authenticates as {user}, not the runner's "
                  f"ServiceAccount {ident.username}: the pipeline runs with this identity's rights")
    if user:
        return failed("identities.authenticate", ident.context, f"authenticates as {user}, the plan expects "
                      f"{ident.username}", f"{again} (or fix the plan's service_account/namespace)")
    return failed("identities.authenticate", ident.context, f"SelfSubjectReview answered HTTP {r.status}: "
                  f"{r.message}", again)


def _namespaces(ctx: PreflightContext, ident: IdentityRef, need: Need) -> list[str]:
    if need.scope is Scope.OWN:
        return [ident.namespace]
    if need.scope is Scope.TENANTS:
        return sorted({t.namespace for t in ctx.plan.tenants})  # the runner observes every tenant namespace
    if need.scope is Scope.RUNNER:
        return [ctx.plan.platform.namespace]
    return [""]


def missing_verbs(ctx: PreflightContext, ident: IdentityRef) -> tuple[int, list[str]]:
    """(requests asked, ``verb resource in namespace`` the identity lacks) for its applicable needs."""
    caller = ctx.caller(ident.context)
    asked, missing = 0, []
    for need in needs_for(ctx.plan, ident.who):
        if not ctx.about(need.classes):
            continue
        for ns in _namespaces(ctx, ident, need):
            for verb in need.verbs:
                asked += 1
                allowed, _reason = can(caller, verb, need.group, need.resource, ns)
                if not allowed:
                    where = f" in {ns}" if ns else " (cluster-wide)"
                    group = f".{need.group}" if need.group else ""
                    missing.append(f"{verb} {need.resource}{group}{where} ({need.used_by.split(':')[0]})")
    return asked, missing


@check("identities.verbs", "every identity holds each verb its classes need")
def verbs(ctx: PreflightContext) -> list[CheckResult]:
    return each_identity("identities.verbs", identities(ctx), lambda i: _verbs_one(ctx, i))


def _verbs_one(ctx: PreflightContext, ident: IdentityRef) -> CheckResult:
    asked, missing = missing_verbs(ctx, ident)
    if missing:
        shown = "; ".join(missing[:6]) + (f"; and {len(missing) - 6} more" if len(missing) > 6 else "")
        return failed("identities.verbs", ident.context, f"{ident.username} may not {shown}",
                      ctx.manifests_fix + " (the rendered Roles grant exactly these)")
    return ok("identities.verbs", ident.context, f"holds all {asked} verbs it needs")


@check("identities.isolation", "no tenant reads another tenant's namespace", classes=())
def isolation(ctx: PreflightContext) -> list[CheckResult]:
    return each_identity("identities.isolation", list(ctx.plan.tenants), lambda t: _isolation_one(ctx, t))


def _isolation_one(ctx: PreflightContext, t) -> CheckResult:
    caller = ctx.caller(t.kube_context)
    others = [o for o in ctx.plan.tenants if o.namespace != t.namespace]
    leaks = []
    for other in others:
        for group, resource, verb in CROSS_TENANT_READS:
            allowed, reason = can(caller, verb, group, resource, other.namespace)
            if allowed:
                leaks.append(f"{verb} {resource} in {other.namespace}" + (f" ({reason})" if reason else ""))
    if leaks:
        return failed("identities.isolation", t.kube_context, f"{t.username} may " + "; ".join(leaks[:4])
                      + (f"; and {len(leaks) - 4} more" if len(leaks) > 4 else "")
                      + ": an isolation finding before the POC starts",
                      "remove the binding that grants it (kubectl get rolebindings,clusterrolebindings -A -o wide), "
                      "or run the POC to record it as a finding")
    return ok("identities.isolation", t.kube_context, f"reads no other tenant's namespace "
              f"({len(CROSS_TENANT_READS) * len(others)} reviews)")
