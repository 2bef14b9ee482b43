"""The first steps of every run: check the plan, then the platform and each tenant's access."""

from __future__ import annotations

from gpupoc.common.timefmt import rfc3339, utcnow
from gpupoc.evidence.gpu_source import gpu_source_rows, nodes_with_dra_gpus
from gpupoc.evidence.subject import subject_rows
from gpupoc.exceptions import ConfigError
from gpupoc.pipeline.common import plan_path
from gpupoc.pipeline.k8s import Actor, KubeCaller, whoami
from gpupoc.pipeline.wave import adapter_name
from gpupoc.steps.context import DEFAULT_ADMIN_USER, RunContext, run_context
from gpupoc.steps.markers import STALE_MARKERS
from gpupoc.steps.shard_files import clear_created


def _resource_slices(admin: KubeCaller) -> list[dict] | None:
    """The cluster's ResourceSlices (its DRA devices); None when they cannot be listed."""
    from gpupoc.kube.dra import RESOURCE_SLICES

    r = admin.call("GET", RESOURCE_SLICES)
    return ((r.body or {}).get("items") or []) if r.ok and isinstance(r.body, dict) else None


def admin_identity(caller: KubeCaller) -> dict:
    """The administrator as the API server names it (SelfSubjectReview, Kubernetes >= 1.28), else kubeadm's
    default name, with where the name came from."""
    fallback = Actor(caller.context, DEFAULT_ADMIN_USER)
    actor = whoami(caller, fallback)
    source = "selfsubjectreviews" if actor is not fallback else "default (selfsubjectreviews unavailable)"
    return {"username": actor.username, "groups": list(actor.groups), "source": source}


def validate_plan(plan_param: str | None, dag_id: str, run_id: str, test_class: str, params: dict,
                  platform: str | None = None) -> dict:
    """Load and check the plan (with ``platform`` of its ``platforms`` chosen); ConfigError lists every problem
    with its path. Records the run's parameters and the plan it compares by (``files/plan.json``)."""
    from gpupoc.plan import load_plan, plan_hash
    from gpupoc.plan.platforms import comparable_data, plan_ref
    from gpupoc.steps.finish import store_suite_parameters
    from gpupoc.steps.run_spec import RUN_SPEC_FILE, RunSpec

    path = plan_ref(str(plan_path(plan_param)), platform or None)
    plan = load_plan(path)  # raises ConfigError("…: N error(s)\n  - tenants[1].quota.gpus: …")
    spec = plan.test_class(test_class)
    if not spec.enabled:
        raise ConfigError(str(path), [f"test_classes.{test_class}.enabled: false; enable the class in the plan "
                                      "or pause this DAG"])
    ctx = run_context(path, dag_id, run_id, test_class)
    for marker in STALE_MARKERS:  # a cleared run starts over: no lease, release or done marker of a past try
        ctx.files(marker).unlink(missing_ok=True)
    clear_created(ctx.writer.files_dir)  # nor a shard's "all created"
    store_suite_parameters(ctx)  # what the suites will judge with, in the evidence from the start
    started = utcnow()
    ctx.writer.write_json("run_params", {"params": params, "plan_file": str(path), "started_at": rfc3339(started)})
    ctx.writer.write_json("plan", comparable_data(plan))
    spec = RunSpec(plan=str(path), plan_hash=plan_hash(plan), run_dir=str(ctx.run_dir), started_at=rfc3339(started),
                   pods=len(ctx.items))
    ctx.writer.write_json(RUN_SPEC_FILE, spec.to_dict())
    return spec.to_dict()


def check_access(ctx: RunContext) -> dict:
    """Record the platform's version and configuration; prove each tenant may create pods in its namespace."""
    from gpupoc.pipeline.k8s import server_version

    who = admin_identity(ctx.reader())
    ctx.writer.write_json("identity", who)
    admin = ctx.admin("record platform version and configuration")
    version = server_version(admin)
    rows = [{"key": "kubernetes.gitVersion", "value": version.get("gitVersion"), "source": "/version"},
            {"key": "kubernetes.platform", "value": version.get("platform"), "source": "/version"},
            {"key": "adapter", "value": adapter_name(ctx.plan), "source": "plan"},
            {"key": "gangs", "value": ctx.plan.platform.options.gangs, "source": "plan"},
            {"key": "admin.username", "value": who["username"], "source": who["source"]},
            {"key": "scheduler_name", "value": ctx.plan.platform.scheduler_name or "default-scheduler",
             "source": "plan"}]
    nodes = admin.call("GET", "/api/v1/nodes")
    rows += subject_rows(ctx.plan, ((nodes.body or {}).get("items") or []) if nodes.ok else None)
    slices = _resource_slices(admin)
    rows += gpu_source_rows(slices, ctx.plan.platform.options.gpus)
    if nodes.ok:
        items = nodes_with_dra_gpus((nodes.body or {}).get("items") or [], slices)
        gpus = sum(int(str(((n.get("status") or {}).get("allocatable") or {}).get("nvidia.com/gpu", 0))) for n in items)
        rows += [{"key": "nodes", "value": str(len(items)), "source": "/api/v1/nodes"},
                 {"key": "gpus.allocatable", "value": str(gpus), "source": "/api/v1/nodes"}]
        ctx.writer.write_json("nodes", [{"name": n["metadata"]["name"], "labels": n["metadata"].get("labels"),
                                         "allocatable": (n.get("status") or {}).get("allocatable"),
                                         **({"gpus_from": n["gpus_from"]} if "gpus_from" in n else {})}
                                        for n in items])
    pcs = admin.call("GET", "/apis/scheduling.k8s.io/v1/priorityclasses")
    if pcs.ok:
        for pc in (pcs.body or {}).get("items") or []:
            rows.append({"key": f"priorityclass.{pc['metadata']['name']}", "value": str(pc.get("value")),
                         "source": "/apis/scheduling.k8s.io/v1/priorityclasses"})
    denied = []
    for t in ctx.plan.tenants:
        r = ctx.tenant(t.name, "check access").call(
            "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            body={"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                  "spec": {"resourceAttributes": {"namespace": t.namespace, "verb": "create", "resource": "pods"}}})
        allowed = bool(r.ok and ((r.body or {}).get("status") or {}).get("allowed"))
        rows.append({"key": f"tenant.{t.name}.can_create_pods", "value": str(allowed).lower(),
                     "source": "selfsubjectaccessreviews"})
        if not allowed:
            denied.append(f"tenants[{ctx.plan.tenants.index(t)}].context: context {t.kube_context!r} may not create "
                          f"pods in namespace {t.namespace!r} (HTTP {r.status}: {r.message}); grant it or fix the "
                          "context")
    ctx.writer.write("platform_info", rows, source="kubernetes-api")
    if denied:
        raise ConfigError(ctx.plan_file, denied)
    return {"version": version.get("gitVersion"), "tenants": len(ctx.plan.tenants)}
