"""What a run judged, recorded in its ``platform_info`` table beside the API server's version.

The report names the platform (the plan's name for it), the plan and the window's time zone from these rows,
and tells the simulated cluster from a real one by what the cluster itself says: the simulated cluster
annotates each of its nodes ``gpupoc.io/simulated: "true"`` (``gpupoc.kube.labels.SIMULATED_ANNOTATION``), a
real node never carries it. KWOK's nodes (a real control plane with fake nodes) carry ``kwok.x-k8s.io/node``. A plan flag alone would be the plan's word against the cluster's.
"""

from __future__ import annotations

from typing import Any, Iterable

from gpupoc.kube.hami import NODE_REGISTER  # HAMi's device plugin registers the node's cards here
from gpupoc.kube.labels import KWOK_ANNOTATION, SIMULATED_ANNOTATION

PLATFORM_NAME = "platform.name"
PLAN_NAME = "plan.name"
TIMEZONE = "window.timezone"
SIMULATED_NODES = "nodes.simulated"
KWOK_NODES = "nodes.kwok"
KUBERNETES_VERSION = "kubernetes.gitVersion"
ADAPTER = "adapter"
GPU_ALLOCATION = "gpus.allocation"  # dra | device-plugin (``evidence.gpu_source``)
GANGS = "gangs"                     # the plan's platform.options.gangs: adapter | workload-api
GPU_SHARING = "nodes.gpu_sharing"


def simulated_nodes(nodes: Iterable[dict[str, Any]]) -> int:
    """How many of the API server's nodes carry the simulated cluster's annotation."""
    return sum(1 for n in nodes
               if str(((n.get("metadata") or {}).get("annotations") or {}).get(SIMULATED_ANNOTATION)) == "true")


def kwok_nodes(nodes: Iterable[dict[str, Any]]) -> int:
    """How many of the API server's nodes are KWOK's (annotated ``kwok.x-k8s.io/node``): a real control plane's
    nodes with no kubelet and no GPU behind them."""
    return sum(1 for n in nodes if KWOK_ANNOTATION in (((n.get("metadata") or {}).get("annotations")) or {}))


def sharing_of(node: dict[str, Any]) -> str:
    """How a node shares its GPUs, from what its device plugins write: ``hami`` (HAMi's registration
    annotation), ``time-slicing`` or ``mps`` (``nvidia.com/gpu.sharing-strategy``), ``mig``
    (``nvidia.com/mig.strategy`` single or mixed), else ``none``."""
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    if NODE_REGISTER in (meta.get("annotations") or {}):
        return "hami"
    strategy = labels.get("nvidia.com/gpu.sharing-strategy", "none")
    if strategy in ("time-slicing", "mps"):
        return strategy
    if labels.get("nvidia.com/mig.strategy") in ("single", "mixed"):
        return "mig"
    return "none"


def gpu_sharing(nodes: Iterable[dict[str, Any]]) -> str:
    """``mig=3,time-slicing=2``: nodes per sharing strategy, sorted (``sharing_of``)."""
    counts: dict[str, int] = {}
    for n in nodes:
        counts[sharing_of(n)] = counts.get(sharing_of(n), 0) + 1
    return ",".join(f"{k}={v}" for k, v in sorted(counts.items()))


def subject_rows(plan: Any, nodes: list[dict[str, Any]] | None) -> list[dict[str, str | None]]:
    """``platform_info`` rows naming the platform and plan (from the plan) and the simulated nodes (from
    ``/api/v1/nodes``; no row when the nodes could not be listed, so the report says it is not known)."""
    rows: list[dict[str, str | None]] = [
        {"key": PLATFORM_NAME, "value": plan.platform.name, "source": "plan"},
        {"key": PLAN_NAME, "value": plan.name, "source": "plan"},
        {"key": TIMEZONE, "value": plan.window.timezone, "source": "plan"}]
    if nodes is not None:
        rows.append({"key": SIMULATED_NODES, "value": str(simulated_nodes(nodes)), "source": "/api/v1/nodes"})
        rows.append({"key": KWOK_NODES, "value": str(kwok_nodes(nodes)), "source": "/api/v1/nodes"})
        rows.append({"key": GPU_SHARING, "value": gpu_sharing(nodes), "source": "/api/v1/nodes"})
    return rows
