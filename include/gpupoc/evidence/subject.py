"""What a run judged, recorded in its ``platform_info`` table beside the API server's version.

The report names the platform (the plan's name for it), the plan and the window's time zone from these rows,
and tells the simulated cluster from a real one by what the cluster itself says: the simulated cluster
annotates each of its nodes ``gpupoc.io/simulated: "true"`` (``gpupoc.sim.bootstrap``), a real node never
carries it. A plan flag alone would be the plan's word against the cluster's.
"""

from __future__ import annotations

from typing import Any, Iterable

SIMULATED_ANNOTATION = "gpupoc.io/simulated"
PLATFORM_NAME = "platform.name"
PLAN_NAME = "plan.name"
TIMEZONE = "window.timezone"
SIMULATED_NODES = "nodes.simulated"
KUBERNETES_VERSION = "kubernetes.gitVersion"
ADAPTER = "adapter"


def simulated_nodes(nodes: Iterable[dict[str, Any]]) -> int:
    """How many of the API server's nodes carry the simulated cluster's annotation."""
    return sum(1 for n in nodes
               if str(((n.get("metadata") or {}).get("annotations") or {}).get(SIMULATED_ANNOTATION)) == "true")


def subject_rows(plan: Any, nodes: list[dict[str, Any]] | None) -> list[dict[str, str | None]]:
    """``platform_info`` rows naming the platform and plan (from the plan) and the simulated nodes (from
    ``/api/v1/nodes``; no row when the nodes could not be listed, so the report says it is not known)."""
    rows: list[dict[str, str | None]] = [
        {"key": PLATFORM_NAME, "value": plan.platform.name, "source": "plan"},
        {"key": PLAN_NAME, "value": plan.name, "source": "plan"},
        {"key": TIMEZONE, "value": plan.window.timezone, "source": "plan"}]
    if nodes is not None:
        rows.append({"key": SIMULATED_NODES, "value": str(simulated_nodes(nodes)), "source": "/api/v1/nodes"})
    return rows
