"""The simulated GPUs (``gpupoc.kube.dcgm.Gpu``): stable UUIDs and bus ids per node, who holds each, and what
each reports."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from gpupoc.kube.dcgm import Gpu, PodKey, Telemetry, pci_bus_id
from gpupoc.sim.config import ClusterConfig

_UUID_NS = uuid.UUID("6f1c2b1e-9a57-4a59-9d7e-3c1f0b6f0a11")

__all__ = ["Gpu", "Inventory", "PodKey", "Telemetry"]


@dataclass
class Inventory:
    """All GPUs by node, plus the telemetry that pods report."""

    gpus: dict[str, list[Gpu]] = field(default_factory=dict)
    telemetry: dict[PodKey, Telemetry] = field(default_factory=dict)
    _by_pod: dict[PodKey, list[Gpu]] = field(default_factory=dict)
    _free: dict[str, int] = field(default_factory=dict)
    _by_uuid: dict[str, Gpu] = field(default_factory=dict)  # a container start looks its cards up here
    # monotonic time up to which Gpu.energy_mj has been integrated (sim/metrics.py); None: not yet
    energy_sampled_at: float | None = None

    @classmethod
    def from_config(cls, config: ClusterConfig) -> "Inventory":
        inv = cls()
        for pool in config.pools:
            for node in pool.node_names():
                gpus = []
                for i in range(pool.gpus_per_node):
                    card = f"GPU-{uuid.uuid5(_UUID_NS, f'{config.name}/{node}/{i}')}"
                    for dev, memory, replica in pool.sharing.devices(card, pool.gpu.memory_mib):
                        gpus.append(Gpu(node=node, index=len(gpus), uuid=dev,
                                        pci_bus_id=pci_bus_id(i),
                                        model_name=pool.gpu.model_name, memory_mib=memory,
                                        max_power_w=pool.gpu.max_power_w, idle_power_w=pool.gpu.idle_power_w,
                                        pool=pool.name, replica=replica, card=i))
                inv.add_node(node, gpus)
        return inv

    def add_node(self, node: str, gpus: list[Gpu]) -> None:
        """Put ``node``'s cards in (replacing any it had)."""
        for old in self.gpus.get(node, []):
            self._by_uuid.pop(old.uuid, None)
        self.gpus[node] = gpus
        self._free[node] = sum(1 for g in gpus if g.holder is None)
        self._by_uuid.update((g.uuid, g) for g in gpus)

    def card(self, uuid_: str) -> Gpu | None:
        """The card (or time-sliced device) of this UUID; None when no node has it."""
        return self._by_uuid.get(uuid_)

    def free_count(self, node: str) -> int:
        """Free GPUs on ``node`` (O(1): the scheduler asks this for every node)."""
        return self._free.get(node, 0)

    def free_on(self, node: str) -> list[Gpu]:
        return [g for g in self.gpus.get(node, []) if g.holder is None]

    def held_by(self, pod: PodKey) -> list[Gpu]:
        return list(self._by_pod.get(pod, []))

    def allocate(self, node: str, pod: PodKey, container: str, count: int) -> list[Gpu]:
        """Give ``count`` free GPUs of ``node`` to ``pod`` (lowest indices first)."""
        free = self.free_on(node)
        if len(free) < count:
            raise ValueError(f"node {node} has {len(free)} free GPUs, {count} requested")
        chosen = free[:count]
        for g in chosen:
            g.holder, g.container = pod, container
        self._by_pod.setdefault(pod, []).extend(chosen)
        self._free[node] -= count
        return chosen

    def release(self, pod: PodKey) -> int:
        """Free every GPU ``pod`` holds; returns how many were freed."""
        held = self._by_pod.pop(pod, [])
        for g in held:
            g.holder, g.container = None, None
            self._free[g.node] += 1
        self.telemetry.pop(pod, None)
        return len(held)
