"""The plan's ``prices:`` section: a currency, a price per GPU model per hour keyed by the node's
``nvidia.com/gpu.product`` (the pools' ``gpu_model``), optional prices per vGPU memory GiB-hour, CPU core-hour and
memory GiB-hour, each with its source, and the rule that spreads shared costs."""

from __future__ import annotations

import re
from enum import Enum

from pydantic import Field, field_validator, model_validator

from gpupoc.common.fields import StrictModel

CURRENCY_RE = re.compile(r"^[A-Z]{3}$")


def model_key(gpu_model: str) -> str:
    """A GPU model as ``nvidia.com/gpu.product`` or the plan spells it ('-' for spaces), for matching."""
    return " ".join(gpu_model.replace("-", " ").replace("_", " ").lower().split())


class SharedRule(str, Enum):
    EVEN = "even"                  # uniformly across the other teams (OpenCost: "uniformly across other tenants")
    PROPORTIONAL = "proportional"  # in proportion to each team's own cost


class Price(StrictModel):
    """One price per unit-hour and where it comes from (a quote, a price list, "example")."""

    per_hour: float = Field(ge=0, description="price of one unit for one hour, in the plan's currency")
    source: str = Field(min_length=1, description="where the figure comes from, shown in the report")


class SharedCosts(StrictModel):
    """Costs that benefit every team, spread by ``rule``: the online services' pods and these namespaces'."""

    rule: SharedRule = SharedRule.PROPORTIONAL
    serving: bool = Field(default=True, description="the online services' replicas (the serving pool) are shared")
    namespaces: list[str] = Field(default_factory=list, description="namespaces whose pods are shared (the "
                                  "harness's own)")


class Prices(StrictModel):
    """What a GPU-hour (and optionally a vGPU memory GiB-hour, CPU core-hour, memory GiB-hour) costs."""

    currency: str = Field(description="ISO 4217 code, e.g. EUR")
    examples: bool = Field(default=False, description="true: the figures are examples, not quotes; the "
                           "report says so")
    gpu_hour: dict[str, Price] = Field(min_length=1, description="per GPU model (nvidia.com/gpu.product)")
    vgpu_memory_gib_hour: Price | None = None
    cpu_core_hour: Price | None = None
    memory_gib_hour: Price | None = None
    shared: SharedCosts = Field(default_factory=SharedCosts)

    @field_validator("currency")
    @classmethod
    def _currency(cls, v: str) -> str:
        if not isinstance(v, str) or not CURRENCY_RE.match(v):
            raise ValueError("expected a three-letter ISO 4217 currency code in capitals, e.g. EUR or USD")
        return v

    @model_validator(mode="after")
    def _distinct_models(self) -> "Prices":
        seen: dict[str, str] = {}
        for name in self.gpu_hour:
            if model_key(name) in seen:
                raise ValueError(f"gpu_hour: {name!r} and {seen[model_key(name)]!r} name the same GPU model; "
                                 "keep one")
            seen[model_key(name)] = name
        return self

    def gpu_price(self, gpu_model: str) -> Price | None:
        """The price of one GPU-hour of ``gpu_model`` (either spelling), None when the plan has none."""
        want = model_key(gpu_model)
        return next((p for name, p in self.gpu_hour.items() if model_key(name) == want), None)

    def unpriced(self, gpu_models: list[str]) -> list[str]:
        """The models of ``gpu_models`` with no price, sorted (a cost over them is not verified)."""
        return sorted({m for m in gpu_models if self.gpu_price(m) is None})
