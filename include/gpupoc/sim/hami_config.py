"""The cluster config's ``hami:`` section: HAMi's device-plugin and scheduler settings (chart ``values.yaml``:
``devicePlugin.deviceSplitCount``, ``deviceMemoryScaling``, ``scheduler.defaultSchedulerPolicy``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt


class HamiConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    device_split_count: PositiveInt = Field(default=10, description="vGPUs each card may be split into")
    device_memory_scaling: PositiveFloat = Field(
        default=1.0, description="registered memory = card memory x this (above 1 oversubscribes)")
    node_scheduler_policy: Literal["binpack", "spread"] = "binpack"
    gpu_scheduler_policy: Literal["binpack", "spread"] = "spread"
