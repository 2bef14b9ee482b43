"""The GPUs of a real cluster's nodes as the exporter shows them, from the API server's objects alone (no GPU runs
on a KWOK node): each node's cards from its ``nvidia.com/gpu`` capacity and GPU product label, the pod holding
each card as the device plugin would give it, and what the pod's virtual workload claims (its
``WORKLOAD_GPU_UTIL``/``WORKLOAD_GPU_MEM_MIB``, as the simulated kubelet plays a virtual container)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from gpupoc.controlplane.nodes import PRODUCT_LABEL
from gpupoc.kube.dcgm import Gpu, PodKey, Telemetry, add_energy, pci_bus_id, virtual_telemetry
from gpupoc.kube.dra import cards_per_node
from gpupoc.kube.resources import GPU

MEMORY_LABEL = "nvidia.com/gpu.memory"  # GPU feature discovery's: the card's memory in MiB
_UUID_NS = uuid.UUID("0b8e7a52-4f0c-4d8e-9a53-2f6b1c7d9e10")
TERMINAL_PHASES = ("Succeeded", "Failed")


@dataclass(frozen=True)
class GpuSpec:
    """A GPU model's framebuffer and power (the simulated cluster's pools give the same figures)."""

    memory_mib: int
    max_power_w: int = 700
    idle_power_w: int = 70


GPU_MODELS = {
    "nvidia h100 80gb hbm3": GpuSpec(81559, 700, 72),
    "nvidia l40s": GpuSpec(46068, 350, 35),
}


def model_key(product: str) -> str:
    """``NVIDIA-H100-80GB-HBM3`` and ``NVIDIA H100 80GB HBM3`` -> ``nvidia h100 80gb hbm3``."""
    return " ".join(product.replace("-", " ").replace("_", " ").lower().split())


def node_cards(node: dict, dra_cards: int = 0) -> list[Gpu]:
    """The node's cards: ``nvidia.com/gpu`` capacity many (or, for DRA GPUs, the whole-card devices its
    ResourceSlices publish: ``dra_cards``), named after the product label; memory from the
    ``nvidia.com/gpu.memory`` label, else the known model's, else 0 (unknown: the claim is shown unbounded)."""
    md, status = node["metadata"], node.get("status") or {}
    labels = md.get("labels") or {}
    try:
        count = int(str((status.get("capacity") or {}).get(GPU, "0")))
    except ValueError:
        count = 0
    count = max(count, dra_cards)
    product = labels.get(PRODUCT_LABEL, "")
    spec = GPU_MODELS.get(model_key(product), GpuSpec(0))
    try:
        memory = int(labels[MEMORY_LABEL]) if MEMORY_LABEL in labels else spec.memory_mib
    except ValueError:
        memory = spec.memory_mib
    name = md["name"]
    return [Gpu(node=name, index=i, uuid=f"GPU-{uuid.uuid5(_UUID_NS, f'{name}/{i}')}", pci_bus_id=pci_bus_id(i),
                model_name=" ".join(product.split("-")), memory_mib=memory, max_power_w=spec.max_power_w,
                idle_power_w=spec.idle_power_w, pool=labels.get("gpupoc.io/pool", ""))
            for i in range(max(count, 0))]


def container_gpus(container: dict) -> int:
    res = container.get("resources") or {}
    value = (res.get("limits") or {}).get(GPU, (res.get("requests") or {}).get(GPU, 0))
    try:
        return int(str(value))
    except ValueError:
        return 0


def holds_cards(pod: dict) -> bool:
    """Bound, not finished, and asking for GPUs: the device plugin has given it cards."""
    spec = pod.get("spec") or {}
    return bool(spec.get("nodeName")) and (pod.get("status") or {}).get("phase") not in TERMINAL_PHASES \
        and any(container_gpus(c) for c in spec.get("containers") or [])


def pod_key(pod: dict) -> PodKey:
    return pod["metadata"].get("namespace", ""), pod["metadata"]["name"]


def pod_telemetry(pod: dict) -> Telemetry | None:
    """What the pod's GPU container claims while it runs (its literal ``WORKLOAD_GPU_*`` env values); None
    before it starts, as the simulated kubelet has no telemetry for a container that has not started."""
    status = pod.get("status") or {}
    if status.get("phase") != "Running":
        return None
    containers = (pod.get("spec") or {}).get("containers") or []
    main = next((c for c in containers if container_gpus(c)), containers[0] if containers else None)
    if main is None:
        return None
    running = {s.get("name") for s in status.get("containerStatuses") or [] if "running" in (s.get("state") or {})}
    if main.get("name") not in running:
        return None
    return virtual_telemetry({e["name"]: e["value"] for e in main.get("env") or []
                              if e.get("name") and isinstance(e.get("value"), str)})


@dataclass
class Allocator:
    """Which cards each pod holds, as the NVIDIA device plugin decides: a pod first seen holding GPUs gets the
    lowest free cards of its node per GPU container, and keeps them until it finishes or is gone."""

    held: dict[str, list[tuple[str, int, str]]] = field(default_factory=dict)  # pod uid -> (node, index, container)

    def assign(self, cards: dict[str, list[Gpu]], pods: list[dict]) -> None:
        """Set ``holder``/``container`` on ``cards`` (node -> cards) for ``pods``; forgets finished pods."""
        live = {p["metadata"].get("uid") or "/".join(pod_key(p)): p for p in pods if holds_cards(p)}
        self.held = {uid: got for uid, got in self.held.items() if uid in live}
        taken = {(node, i) for got in self.held.values() for node, i, _ in got}
        order = sorted(live.items(), key=lambda kv: (kv[1]["metadata"].get("creationTimestamp") or "",
                                                     *pod_key(kv[1])))
        for uid, pod in order:
            if uid not in self.held:
                self.held[uid] = self._take(cards, pod, taken)
            for node, i, container in self.held[uid]:
                if i < len(cards.get(node, [])):
                    card = cards[node][i]
                    card.holder, card.container = pod_key(pod), container

    @staticmethod
    def _take(cards: dict[str, list[Gpu]], pod: dict, taken: set) -> list[tuple[str, int, str]]:
        node = pod["spec"]["nodeName"]
        free = [g.index for g in cards.get(node, []) if (node, g.index) not in taken]
        got = []
        for c in pod["spec"].get("containers") or []:
            for _ in range(container_gpus(c)):
                if free:
                    got.append((node, free.pop(0), c.get("name", "")))
        taken.update((n, i) for n, i, _ in got)
        return got


@dataclass
class EnergyMeter:
    """Each card's energy counter (mJ since the exporter started): its power integrated between scrapes."""

    total_mj: dict[str, float] = field(default_factory=dict)
    last: float | None = None

    def advance(self, cards: list[Gpu], telemetry: dict[PodKey, Telemetry], now: float) -> None:
        """Add the cards' current power since the last call, then set each card's ``energy_mj``."""
        for g in cards:
            g.energy_mj = self.total_mj.get(g.uuid, 0.0)
        if self.last is not None and now > self.last:
            add_energy(cards, telemetry, now - self.last)
        self.last = now if self.last is None or now > self.last else self.last
        self.total_mj = {g.uuid: g.energy_mj for g in cards}


def cluster_cards(nodes: list[dict], pods: list[dict], allocator: Allocator, slices: list[dict] | None = None
                  ) -> tuple[list[Gpu], dict[PodKey, Telemetry]]:
    """Every node's cards (in node-name order) with their holders, and the holders' telemetry; ``slices``: the
    ResourceSlices, whose whole-card DRA devices are cards too (a pod's ``nvidia.com/gpu`` served by DRA still
    names its count, so the holders are found as for a device plugin's)."""
    published = cards_per_node(slices or [])
    cards = {n["metadata"]["name"]: node_cards(n, published.get(n["metadata"]["name"], 0)) for n in nodes}
    allocator.assign(cards, pods)
    telemetry = {}
    for p in pods:
        if holds_cards(p):
            tel = pod_telemetry(p)
            if tel is not None:
                telemetry[pod_key(p)] = tel
    return [g for name in sorted(cards) for g in cards[name]], telemetry
