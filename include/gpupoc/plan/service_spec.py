"""A ``kind: service`` workload's serving part: how it is exposed and probed, the traffic a load pod sends it,
and the SLO that traffic is judged by (docs/services.md)."""

from __future__ import annotations

from pydantic import Field, model_validator

from gpupoc.common.fields import PositiveInt, PositiveNumber, StrictModel


class Traffic(StrictModel):
    """The load pod's profile: ``rate`` requests a second for ``duration_seconds`` to ``path``."""

    rate: PositiveNumber = Field(default=5, description="requests per second")
    duration_seconds: PositiveInt = Field(default=60, description="how long the load pod sends them")
    path: str = Field(default="/v1/predict", pattern=r"^/", description="the request path on the Service")
    timeout_seconds: PositiveNumber = Field(default=2, description="a request not answered by then is unavailable")


class Slo(StrictModel):
    """What the traffic must see: availability (% of requests answered 2xx) and latency percentiles."""

    availability_pct: float = Field(default=99.0, gt=0, le=100)
    p95_ms: PositiveNumber = 500
    p99_ms: PositiveNumber = 1000

    @model_validator(mode="after")
    def _p99_not_below_p95(self) -> "Slo":
        if self.p99_ms < self.p95_ms:
            raise ValueError(f"slo.p99_ms {self.p99_ms:g} is below slo.p95_ms {self.p95_ms:g}; a 99th percentile "
                             "cannot be faster than the 95th: raise p99_ms or lower p95_ms")
        return self


class ServiceSpec(StrictModel):
    """The Deployment's port and readiness probe, and its traffic and SLO."""

    port: PositiveInt = Field(default=8080, le=65535, description="the container's port and the Service's")
    readiness_path: str = Field(default="/healthz", pattern=r"^/")
    latency_ms: float = Field(default=0, ge=0, description="a fixed delay per prediction (WORKLOAD_LATENCY_MS)")
    traffic: Traffic = Field(default_factory=Traffic)
    slo: Slo = Field(default_factory=Slo)
