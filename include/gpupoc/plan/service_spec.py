"""A ``kind: service`` workload's serving part: how it is exposed and probed, the traffic a load pod sends it,
and the SLO that traffic is judged by (docs/services.md)."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from gpupoc.common.fields import NonNegativeNumber, PositiveInt, PositiveNumber, StrictModel
from gpupoc.plan.injector_spec import NodeInjector, injector_shorthand


class Traffic(StrictModel):
    """The load pod's profile: ``rate`` requests a second for ``duration_seconds`` to ``path``."""

    rate: PositiveNumber = Field(default=5, description="requests per second")
    duration_seconds: PositiveInt = Field(default=60, description="how long the load pod sends them")
    path: str = Field(default="/v1/predict", pattern=r"^/", description="the request path on the Service")
    timeout_seconds: PositiveNumber = Field(default=2, description="a request not answered by then is unavailable")
    lag_bound_ms: PositiveNumber = Field(
        default=100, description="the load generator's own lag: a request sent this much after its slot in the "
        "schedule, or an answer read this much after the replica's own time to answer, is counted apart and "
        "judged on the replica's own time (docs/services.md)")


class Slo(StrictModel):
    """What the traffic must see: availability (% of requests answered 2xx) and latency percentiles; and how
    much of the traffic the load generator's own lag may distort before the SLO cannot be judged."""

    availability_pct: float = Field(default=99.0, gt=0, le=100)
    p95_ms: PositiveNumber = 500
    p99_ms: PositiveNumber = 1000
    max_harness_lag_pct: float = Field(
        default=50.0, ge=0, le=100, description="when more than this % of the window's requests were sent or "
        "read late by the load generator (traffic.lag_bound_ms), an SLO the rest met is not verified, naming "
        "the harness's lag; a miss is a miss whatever the lag")

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
    warmup_seconds: NonNegativeNumber = Field(
        default=0, description="how long a new replica loads its model before /healthz answers 200 "
        "(WORKLOAD_WARMUP_SECONDS): a replica that is not ready yet must get no traffic")
    traffic: Traffic = Field(default_factory=Traffic)
    slo: Slo = Field(default_factory=Slo)


class ServiceEntry(StrictModel):
    """A ``kind: service`` workload a test class deploys as ``tenant`` beside its wave, and whether a load pod
    sends it the workload's traffic while the class runs."""

    workload: str
    tenant: str
    replicas: PositiveInt | None = Field(default=None, description="overrides the workload's replicas")
    traffic: bool = Field(default=True, description="a load pod sends the workload's traffic and the SLO is "
                          "judged; false: the service is only deployed (isolation, utilization, audit)")
    traffic_seconds: PositiveInt | None = Field(
        default=None, description="overrides the workload's traffic.duration_seconds: how long this class "
        "sends traffic (cover the wave)")


class ServiceFailure(StrictModel):
    """A node failure under a serving replica: the node of one ready replica of ``service`` fails
    ``at_seconds`` after the traffic starts and comes back after ``recover_after_seconds``."""

    service: str = Field(description="a workload of the class's services")
    at_seconds: NonNegativeNumber = 10
    recover_after_seconds: PositiveNumber = 30
    injector: NodeInjector | None = Field(
        default=None, description="how the node is failed: sim, command, taint or drain (gpupoc.plan.injector_spec); "
        "unset: as the class's node_failure injection fails its node, else sim")

    @field_validator("injector", mode="before")
    @classmethod
    def _injector_shorthand(cls, v: object) -> object:
        return injector_shorthand(v)
