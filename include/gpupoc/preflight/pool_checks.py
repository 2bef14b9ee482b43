"""The pools the plan names are on the cluster: nodes by ``node_selector``, their GPU capacity, their taints
(tolerated by the pool's tolerations, else no workload lands there) and their GPU model."""

from __future__ import annotations

from gpupoc.kube.dra import cards_per_node
from gpupoc.kube.resources import GPU
from gpupoc.preflight.context import PreflightContext
from gpupoc.preflight.model import CheckResult, failed, ok
from gpupoc.preflight.registry import check

PRODUCT_LABEL = "nvidia.com/gpu.product"  # GPU feature discovery's label: the model with '-' for spaces


def pool_nodes(nodes: list[dict], pool) -> list[dict]:
    def selected(n: dict) -> bool:
        labels = (n.get("metadata") or {}).get("labels") or {}
        return all(labels.get(k) == v for k, v in pool.node_selector.items())
    return [n for n in nodes if selected(n)]


def tolerated(taint: dict, tolerations) -> bool:
    """Whether one of the pool's tolerations tolerates a NoSchedule or NoExecute taint (v1 semantics)."""
    for t in tolerations:
        if t.effect and t.effect != taint.get("effect"):
            continue
        if t.key is None and t.operator == "Exists":
            return True
        if t.key != taint.get("key"):
            continue
        if t.operator == "Exists" or (t.value or "") == (taint.get("value") or ""):
            return True
    return False


def _gpus(node: dict) -> int:
    try:
        return int(str(((node.get("status") or {}).get("allocatable") or {}).get(GPU, 0)))
    except ValueError:
        return 0


def cards(node: dict) -> tuple[int, str]:
    """The node's physical GPUs, and how its allocatable ``nvidia.com/gpu`` counts them when not one each: HAMi
    registers each card once in ``hami.io/node-nvidia-register`` and advertises cards x ``deviceSplitCount``
    vGPUs; time-slicing and MPS advertise cards x ``nvidia.com/gpu.replicas``."""
    from gpupoc.kube.hami import registered_cards

    allocatable = _gpus(node)
    registered = registered_cards(node)
    if registered:
        return len(registered), f"{allocatable} allocatable {GPU}: HAMi vGPUs of {len(registered)} registered cards"
    replicas = ((node.get("metadata") or {}).get("labels") or {}).get("nvidia.com/gpu.replicas", "")
    if replicas.isdigit() and int(replicas) > 1:
        return allocatable // int(replicas), f"{allocatable} allocatable {GPU}: {replicas} replicas a card"
    return allocatable, ""


def dra_cards(node: dict, published: dict[str, int]) -> tuple[int, str]:
    """The node's whole-card DRA devices (``gpupoc.kube.dra``), as ``cards`` says it."""
    count = published.get(node["metadata"]["name"], 0)
    return count, f"{count} whole-card DRA devices in its ResourceSlices"


def pool_problems(pool, nodes: list[dict], published: dict[str, int] | None = None) -> list[str]:
    """What differs from the plan; ``published``: the GPUs are DRA devices, whole cards per node."""
    out = []
    if len(nodes) < pool.nodes:
        out.append(f"{len(nodes)} node(s) match node_selector {pool.node_selector}, the plan says {pool.nodes}")
    names = {n["metadata"]["name"] for n in nodes}
    absent = [n for n in pool.node_names if n not in names]
    if absent:
        out.append(f"node_names {absent} are not among the pool's nodes")
    for n in nodes:
        name = n["metadata"]["name"]
        count, shared = cards(n) if published is None else dra_cards(n, published)
        if count != pool.gpus_per_node:
            out.append(f"{name} has {count} GPUs ({shared}), the plan says {pool.gpus_per_node}" if shared else
                       f"{name} has {count} allocatable {GPU}, the plan says {pool.gpus_per_node}")
        for taint in (n.get("spec") or {}).get("taints") or []:
            if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerated(taint, pool.tolerations):
                out.append(f"{name} has taint {taint.get('key')}={taint.get('value', '')}:{taint.get('effect')} that "
                           "the pool's tolerations do not tolerate")
        product = ((n.get("metadata") or {}).get("labels") or {}).get(PRODUCT_LABEL)
        if product and product.replace("-", " ").lower() != pool.gpu_model.replace("-", " ").lower():
            out.append(f"{name} has {PRODUCT_LABEL}={product}, the plan says gpu_model {pool.gpu_model!r}")
    return out


@check("pools", "the pools' nodes, GPU capacity, taints and GPU model match the plan")
def pools(ctx: PreflightContext) -> list[CheckResult]:
    nodes = ctx.nodes()
    wanted = {ctx.plan.workload(i.workload).pool for i in _class_items(ctx)} if ctx.test_class else None
    published, out = None, []
    if ctx.plan.platform.options.dra:
        slices = ctx.resource_slices()
        if slices is None:
            return [failed("pools", "", "platform.options.gpus is dra but the ResourceSlices cannot be listed",
                           "give the runner list on resourceslices (gpupoc cluster manifests grants it under gpus: "
                           "dra) on a cluster that serves resource.k8s.io/v1 (Kubernetes v1.34+)")]
        published = cards_per_node(slices)
    for i, pool in enumerate(ctx.plan.pools):
        if wanted is not None and pool.name not in wanted:
            continue
        mine = pool_nodes(nodes, pool)
        problems = pool_problems(pool, mine, published)
        if problems:
            labels = " ".join(f"{k}={v}" for k, v in pool.node_selector.items())
            more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
            dra = ("; under gpus: dra the nodes' DRA driver publishes the cards (the real control plane's "
                   "`gpupoc controlplane up --dra`, `gpupoc demo --cluster kwok`; the simulated cluster publishes "
                   "none)") if published is not None else ""
            out.append(failed("pools", pool.name, "; ".join(problems[:5]) + more,
                              f"fix pools[{i}] in the plan to what the cluster has, or label and taint the nodes "
                              f"(kubectl label node NODE {labels}){dra}"))
        elif published is not None:
            out.append(ok("pools", pool.name, f"{len(mine)} node(s) x {pool.gpus_per_node} whole-card DRA devices, "
                          "taints tolerated"))
        else:
            out.append(ok("pools", pool.name, f"{len(mine)} node(s) x {pool.gpus_per_node} {GPU}, taints tolerated"))
    return out


def _class_items(ctx: PreflightContext):
    from gpupoc.plan import class_items

    return class_items(ctx.plan, ctx.test_class)
