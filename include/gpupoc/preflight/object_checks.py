"""The objects the plan names exist and match it: namespaces, GPU quotas, priority classes, the adapter's queues."""

from __future__ import annotations

from gpupoc.kube.resources import GPU_QUOTA_KEY
from gpupoc.kube.schedulers import KAI_QUEUE_VERSION, KUEUE_VERSION, VOLCANO_VERSION
from gpupoc.preflight.context import PreflightContext
from gpupoc.preflight.model import CheckResult, failed, not_applicable, ok
from gpupoc.preflight.queue_match import kai_differences, kueue_differences, volcano_differences
from gpupoc.preflight.registry import check

KUEUE = f"/apis/{KUEUE_VERSION}"
VOLCANO = f"/apis/{VOLCANO_VERSION}"
KAI = f"/apis/{KAI_QUEUE_VERSION}"


def _get(ctx: PreflightContext, path: str) -> tuple[int, dict | None, str]:
    r = ctx.runner().call("GET", path)
    return r.status, (r.body if r.ok and isinstance(r.body, dict) else None), r.message


@check("namespaces", "the namespaces exist")
def namespaces(ctx: PreflightContext) -> list[CheckResult]:
    wanted = [ctx.plan.platform.namespace] + [t.namespace for t in ctx.tenants]
    out = []
    for ns in dict.fromkeys(wanted):
        status, body, message = _get(ctx, f"/api/v1/namespaces/{ns}")
        phase = ((body or {}).get("status") or {}).get("phase", "Active")
        if body is not None and phase == "Active":
            out.append(ok("namespaces", ns, "exists"))
        elif body is not None:
            out.append(failed("namespaces", ns, f"is {phase}", f"wait until it is deleted, then {ctx.manifests_fix}"))
        elif status == 404:
            out.append(failed("namespaces", ns, "does not exist", ctx.manifests_fix))
        else:
            out.append(failed("namespaces", ns, f"cannot be read (HTTP {status}: {message})", ctx.manifests_fix))
    return out


@check("quotas", "each tenant's GPU quota exists with the plan's limits")
def quotas(ctx: PreflightContext) -> list[CheckResult]:
    out = []
    for t in ctx.tenants:
        r = ctx.runner().call("GET", f"/api/v1/namespaces/{t.namespace}/resourcequotas")
        if not r.ok:
            out.append(failed("quotas", t.namespace, f"cannot list its ResourceQuotas (HTTP {r.status}: "
                              f"{r.message})", ctx.manifests_fix))
            continue
        hard = {q["metadata"]["name"]: ((q.get("spec") or {}).get("hard") or {}).get(GPU_QUOTA_KEY)
                for q in (r.body or {}).get("items") or []}
        limits = {name: v for name, v in hard.items() if v is not None}
        if not limits:
            out.append(failed("quotas", t.namespace, f"no ResourceQuota limits {GPU_QUOTA_KEY}", ctx.manifests_fix))
        elif not any(str(v) == str(t.quota.gpus) for v in limits.values()):
            seen = ", ".join(f"{n}: {v}" for n, v in sorted(limits.items()))
            out.append(failed("quotas", t.namespace, f"{GPU_QUOTA_KEY} is {seen}; the plan says {t.quota.gpus}",
                              f"set the quota to {t.quota.gpus} ({ctx.manifests_fix}) or fix tenants[].quota.gpus"))
        else:
            out.append(ok("quotas", t.namespace, f"{GPU_QUOTA_KEY}: {t.quota.gpus}"))
    return out


@check("priority_classes", "the priority classes exist with the plan's values")
def priority_classes(ctx: PreflightContext) -> list[CheckResult]:
    out = []
    for pc in ctx.plan.priority_classes:
        status, body, message = _get(ctx, f"/apis/scheduling.k8s.io/v1/priorityclasses/{pc.name}")
        if body is None:
            what = "does not exist" if status == 404 else f"cannot be read (HTTP {status}: {message})"
            out.append(failed("priority_classes", pc.name, what, ctx.manifests_fix))
        elif body.get("value") != pc.value:
            out.append(failed("priority_classes", pc.name, f"has value {body.get('value')}, the plan says {pc.value}",
                              "fix priority_classes[].value in the plan (the value orders the queue the report "
                              "reconstructs), or the cluster's class"))
        else:
            out.append(ok("priority_classes", pc.name, f"value {pc.value}"))
    return out


@check("adapter.queues", "the adapter's queues exist and match the plan")
def adapter_queues(ctx: PreflightContext) -> list[CheckResult]:
    adapter = ctx.plan.platform.adapter.value
    if adapter == "kueue":
        return _kueue(ctx)
    if adapter == "volcano":
        return _named_queues(ctx, "volcano", VOLCANO, volcano_differences)
    if adapter == "kai":
        return _named_queues(ctx, "kai", KAI, kai_differences)
    return [not_applicable("adapter.queues", "", f"adapter {adapter} uses no queues")]


def _kueue(ctx: PreflightContext) -> list[CheckResult]:
    out, seen_cq = [], set()
    for t in ctx.tenants:
        lq = t.queues.get("kueue")
        status, body, message = _get(ctx, f"{KUEUE}/namespaces/{t.namespace}/localqueues/{lq}")
        if body is None:
            out.append(failed("adapter.queues", f"{t.namespace}/{lq}", "LocalQueue does not exist" if status == 404
                              else f"LocalQueue cannot be read (HTTP {status}: {message})", ctx.manifests_fix))
            continue
        cq = (body.get("spec") or {}).get("clusterQueue", "")
        cq_status, cq_body, _ = _get(ctx, f"{KUEUE}/clusterqueues/{cq}")
        if cq_body is None:
            out.append(failed("adapter.queues", f"{t.namespace}/{lq}", f"its ClusterQueue {cq!r} does not exist"
                              if cq_status == 404 else f"its ClusterQueue {cq!r} cannot be read (HTTP {cq_status})",
                              ctx.manifests_fix))
            continue
        out.append(ok("adapter.queues", f"{t.namespace}/{lq}", f"LocalQueue of ClusterQueue {cq}"))
        seen_cq.add(cq)
    declared = ctx.plan.cluster.queues.kueue
    for cq in (declared.cluster_queues if declared else []):
        if ctx.test_class is not None and cq.name not in seen_cq:
            continue
        _status, body, _ = _get(ctx, f"{KUEUE}/clusterqueues/{cq.name}")
        flavor = _get(ctx, f"{KUEUE}/resourceflavors/{cq.flavor}")[1]
        diffs = kueue_differences(cq, body, flavor, ctx.plan.pool(cq.flavor))
        out.append(_matched("ClusterQueue", cq.name, diffs, ctx, declared=True))
    return out


def _named_queues(ctx: PreflightContext, adapter: str, api: str, differences) -> list[CheckResult]:
    declared = getattr(ctx.plan.cluster.queues, adapter)
    by_name = {q.name: q for q in declared.queues} if declared else {}
    out = []
    for name in dict.fromkeys(t.queues.get(adapter) for t in ctx.tenants):
        status, body, message = _get(ctx, f"{api}/queues/{name}")
        if body is None:
            out.append(failed("adapter.queues", name, "Queue does not exist" if status == 404 else
                              f"Queue cannot be read (HTTP {status}: {message})", ctx.manifests_fix))
            continue
        out.append(_matched("Queue", name, differences(by_name.get(name), body), ctx, name in by_name))
    return out


def _matched(kind: str, name: str, diffs: list[str], ctx: PreflightContext, declared: bool) -> CheckResult:
    if diffs:
        return failed("adapter.queues", name, f"{kind} differs from cluster.queues: " + "; ".join(diffs),
                      f"{ctx.manifests_fix}, or change cluster.queues to what the platform holds")
    return ok("adapter.queues", name, f"{kind} exists" + (" and matches cluster.queues" if declared else ""))

