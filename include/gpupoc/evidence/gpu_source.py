"""How the run's GPUs reached the scheduler, recorded in its ``platform_info`` table: a device plugin's
``nvidia.com/gpu`` node capacity, or DRA devices (ResourceSlices) that kube-scheduler allocated itself.

The rows say what the cluster published, not what the plan asked: ``gpus.allocation`` is ``dra`` when some
node publishes whole-card DRA devices (``gpupoc.kube.dra``), with the drivers and the card count beside it, so
a report can say the candidate was kube-scheduler with DRA. Under DRA a node's whole cards are what its
``nvidia.com/gpu`` (a DRA-backed extended resource) lets pods ask for: ``nodes_with_dra_gpus`` puts that count
into the recorded nodes' allocatable, where the wave's capacity is read from, and marks them ``gpus_from: dra``.
"""

from __future__ import annotations

from typing import Any

from gpupoc.evidence.subject import GPU_ALLOCATION
from gpupoc.kube.dra import RESOURCE_SLICES, cards_per_node, drivers
from gpupoc.kube.resources import GPU

DRA_DRIVERS = "gpus.dra.drivers"
DRA_CARDS = "gpus.dra.whole_cards"
DRA, DEVICE_PLUGIN = "dra", "device-plugin"


def gpu_source_rows(slices: list[dict[str, Any]] | None, plan_gpus: str) -> list[dict[str, str | None]]:
    """The rows for the ResourceSlices listed (None: they could not be, so the allocation is the plan's word,
    said so in the source); ``plan_gpus``: the plan's ``platform.options.gpus``."""
    if slices is None:
        return [{"key": GPU_ALLOCATION, "value": plan_gpus,
                 "source": f"plan (the ResourceSlices could not be listed: {RESOURCE_SLICES})"}]
    published = cards_per_node(slices)
    if not published:
        return [{"key": GPU_ALLOCATION, "value": DEVICE_PLUGIN, "source": f"{RESOURCE_SLICES} (no whole-card "
                 "DRA device published)"}]
    return [{"key": GPU_ALLOCATION, "value": DRA, "source": RESOURCE_SLICES},
            {"key": DRA_DRIVERS, "value": ",".join(drivers(slices)), "source": RESOURCE_SLICES},
            {"key": DRA_CARDS, "value": str(sum(published.values())), "source": RESOURCE_SLICES}]


def nodes_with_dra_gpus(nodes: list[dict[str, Any]], slices: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The nodes, each publishing whole-card DRA devices given that many ``nvidia.com/gpu`` in allocatable
    (unless it advertises more itself) and ``gpus_from: dra``; the others unchanged."""
    published = cards_per_node(slices or [])
    out = []
    for n in nodes:
        count = published.get(n["metadata"]["name"], 0)
        status = n.get("status") or {}
        allocatable = dict(status.get("allocatable") or {})
        if count <= 0 or _int(allocatable.get(GPU)) >= count:
            out.append(n)
            continue
        allocatable[GPU] = str(count)
        out.append({**n, "status": {**status, "allocatable": allocatable}, "gpus_from": DRA})
    return out


def _int(value: Any) -> int:
    try:
        return int(str(value or 0))
    except ValueError:
        return 0
