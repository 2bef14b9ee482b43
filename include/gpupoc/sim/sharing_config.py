"""How a pool's cards are shared, as NVIDIA's k8s-device-plugin configures it (a pool's ``sharing:``):

- ``none``: one card, one ``nvidia.com/gpu``;
- ``time-slicing`` (``sharing.timeSlicing.resources[].replicas``, ``renameByDefault: false``): each card is
  advertised ``replicas`` times as ``nvidia.com/gpu``; every replica sees the whole card, its memory and its
  faults (the README: each workload "has access to the GPU memory and runs in the same fault-domain"). Labels
  ``nvidia.com/gpu.sharing-strategy: time-slicing``, ``nvidia.com/gpu.replicas``, product suffixed ``-SHARED``;
- ``mig`` with ``mig.strategy: single``: each card split into ``7 // g`` instances of one profile
  (``1g.10gb`` ...), advertised as ``nvidia.com/gpu``; each instance has its own ``MIG-`` UUID and only its
  own memory (hardware isolation). Labels ``nvidia.com/mig.strategy: single``, product suffixed
  ``-MIG-<profile>``.

``devices`` says which devices one card becomes; the inventory and the node's labels follow it.
"""

from __future__ import annotations

import re
import uuid
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator

MIG_SLICES = 7  # compute slices of an A100/H100
_PROFILE = re.compile(r"^(\d)g\.(\d+)gb$")
_MIG_NS = uuid.UUID("0b0e8a4e-3f6c-4d3e-9a51-5b9f3c0d7e21")


class Sharing(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    strategy: Literal["none", "time-slicing", "mig"] = "none"
    replicas: PositiveInt = Field(default=1, description="time-slicing: replicas advertised per card")
    mig_profile: str = Field(default="1g.10gb", description="mig: the one profile every card is split into")

    @field_validator("mig_profile")
    @classmethod
    def _profile_shape(cls, value: str) -> str:
        m = _PROFILE.match(value)
        if not m or not 1 <= int(m.group(1)) <= MIG_SLICES:
            raise ValueError(f"mig_profile {value!r}: expected <g>g.<m>gb with g from 1 to 7, e.g. 1g.10gb")
        return value

    @property
    def per_card(self) -> int:
        if self.strategy == "time-slicing":
            return self.replicas
        if self.strategy == "mig":
            return MIG_SLICES // int(self.mig_profile.split("g", 1)[0])
        return 1

    def devices(self, card_uuid: str, memory_mib: int) -> list[tuple[str, int, int]]:
        """(device UUID, memory MiB, replica number) of what one card is advertised as."""
        if self.strategy == "time-slicing":
            return [(card_uuid, memory_mib, r) for r in range(self.replicas)]
        if self.strategy == "mig":
            gib = int(_PROFILE.match(self.mig_profile).group(2))  # type: ignore[union-attr]
            return [(f"MIG-{uuid.uuid5(_MIG_NS, f'{card_uuid}/{i}')}", gib * 1024, 0) for i in range(self.per_card)]
        return [(card_uuid, memory_mib, 0)]

    def node_labels(self, product: str | None) -> dict[str, str]:
        """The labels gpu-feature-discovery adds for the strategy (product from the pool's labels)."""
        if self.strategy == "time-slicing":
            labels = {"nvidia.com/gpu.sharing-strategy": "time-slicing", "nvidia.com/gpu.replicas": str(self.replicas)}
            if product:
                labels["nvidia.com/gpu.product"] = f"{product}-SHARED"
            return labels
        if self.strategy == "mig":
            labels = {"nvidia.com/mig.strategy": "single", "nvidia.com/gpu.sharing-strategy": "none"}
            if product:
                labels["nvidia.com/gpu.product"] = f"{product}-MIG-{self.mig_profile}"
            return labels
        return {}

    @property
    def isolates_memory(self) -> bool:
        return self.strategy != "time-slicing"
