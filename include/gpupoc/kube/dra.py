"""GPUs as DRA devices (``resource.k8s.io/v1``), read from the API server's ResourceSlices and ResourceClaims:
the whole cards each node publishes, and what kube-scheduler allocated to each claim. A whole card is a device
whose ``type`` attribute is ``gpu`` (NVIDIA's DRA driver for GPUs and gpupoc's KWOK driver both say so); a
MIG-like partition says ``mig`` and a card shared by memory ``shared``."""

from __future__ import annotations

from dataclasses import dataclass

API_VERSION = "resource.k8s.io/v1"
RESOURCE_SLICES = "/apis/resource.k8s.io/v1/resourceslices"
RESOURCE_CLAIMS = "/apis/resource.k8s.io/v1/resourceclaims"
WHOLE_CARD = "gpu"
# gpupoc's DRA driver for KWOK GPU nodes (``gpupoc.controlplane.dra_slices``) and its DeviceClasses
DRIVER = "gpu.gpupoc.io"
WHOLE_CLASS = "gpu.gpupoc.io"  # whole cards; also serves a pod's ``nvidia.com/gpu`` (DRA-backed extended resource)
MIG_CLASS = "mig.gpupoc.io"
SHARED_CLASS = "shared-gpu.gpupoc.io"  # a card shared by memory (consumable capacity)


def device_type(device: dict) -> str:
    """A device's ``type`` attribute (plain or qualified by the driver's domain, ``gpu.nvidia.com/type``)."""
    for key, value in (device.get("attributes") or {}).items():
        if key == "type" or key.endswith("/type"):
            return str((value or {}).get("string", ""))
    return ""


@dataclass(frozen=True)
class Card:
    """One whole-card device: its node, driver, pool and device name, and its ``index`` attribute (else -1)."""

    node: str
    driver: str
    pool: str
    device: str
    index: int


def _index(device: dict) -> int:
    value = (device.get("attributes") or {}).get("index") or {}
    try:
        return int(value.get("int", -1))
    except (TypeError, ValueError):
        return -1


def whole_cards(slices: list[dict]) -> list[Card]:
    """Every node's whole-card devices, once each (a pool's slices of its newest generation), by node and index."""
    newest: dict[tuple[str, str], int] = {}
    for s in slices:
        spec = s.get("spec") or {}
        key = (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""))
        newest[key] = max(newest.get(key, 0), int((spec.get("pool") or {}).get("generation", 0)))
    seen: dict[tuple[str, str, str], Card] = {}
    for s in slices:
        spec = s.get("spec") or {}
        pool = spec.get("pool") or {}
        driver, name, node = spec.get("driver", ""), pool.get("name", ""), spec.get("nodeName") or ""
        if not node or int(pool.get("generation", 0)) != newest[(driver, name)]:
            continue
        for d in spec.get("devices") or []:
            if device_type(d) == WHOLE_CARD:
                seen[(driver, name, d["name"])] = Card(node, driver, name, d["name"], _index(d))
    return sorted(seen.values(), key=lambda c: (c.node, c.index, c.device))


def cards_per_node(slices: list[dict]) -> dict[str, int]:
    """How many whole cards each node publishes (nodes with none are absent)."""
    out: dict[str, int] = {}
    for c in whole_cards(slices):
        out[c.node] = out.get(c.node, 0) + 1
    return out


def drivers(slices: list[dict]) -> list[str]:
    """The drivers that publish whole cards, sorted."""
    return sorted({c.driver for c in whole_cards(slices)})


@dataclass(frozen=True)
class Allocation:
    """One device kube-scheduler allocated to a claim, with the pods the claim is reserved for."""

    namespace: str
    claim: str
    driver: str
    pool: str
    device: str
    consumed: dict
    pods: tuple[str, ...]


def allocations(claims: list[dict]) -> list[Allocation]:
    """The devices of every allocated claim (a pending claim has none)."""
    out = []
    for c in claims:
        md, status = c.get("metadata") or {}, c.get("status") or {}
        pods = tuple(r.get("name", "") for r in status.get("reservedFor") or [] if r.get("resource") == "pods")
        results = (((status.get("allocation") or {}).get("devices") or {}).get("results")) or []
        out += [Allocation(md.get("namespace", ""), md.get("name", ""), r.get("driver", ""), r.get("pool", ""),
                           r.get("device", ""), dict(r.get("consumedCapacity") or {}), pods) for r in results]
    return out
