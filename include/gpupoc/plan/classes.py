"""Per test class: the wave, probes, injections and thresholds."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal, Union

from pydantic import Field, field_validator

from gpupoc.common.fields import (
    DnsLabel,
    NonNegativeInt,
    NonNegativeNumber,
    PositiveInt,
    PositiveNumber,
    Ratio,
    StrictModel,
)
from gpupoc.common.test_classes import TestClass
from gpupoc.plan.injector_spec import NodeInjector, SimInjector, injector_shorthand
from gpupoc.plan.replay_spec import ReplaySpec
from gpupoc.plan.service_spec import ServiceEntry, ServiceFailure
from gpupoc.plan.submission_spec import SubmissionSpec


class WaveEntry(StrictModel):
    """``count`` copies of a catalogue workload submitted as ``tenant``."""

    workload: str
    tenant: str
    count: PositiveInt = 1
    priority_class: str | None = Field(default=None, description="overrides the workload's priority class")


class Resubmission(StrictModel):
    """What happens to a wave item the platform preempts or evicts: users submit it again."""

    limit: int = Field(default=2, ge=0, le=10,
                       description="new attempts after a preemption or eviction (Airflow retries of its task)")
    platform_requeues: bool = Field(
        default=False, description="the platform is expected to requeue preempted or evicted workloads itself "
                                   "(Kueue re-admits them); checked, and the pipeline then never resubmits")
    wait_seconds: PositiveInt = Field(
        default=60, description="how long the observer waits for an item's next attempt after it was preempted")


class ClassSpec(StrictModel):
    """What every test class has: whether it runs, its wave and how long the gate may hold the wave."""

    enabled: bool = True
    wave: list[WaveEntry] = Field(default_factory=list)
    gate_timeout_seconds: PositiveInt = Field(
        default=600, description="longest time the wave may be held by the scheduling gate before release")
    gpu_group: str = Field(default="gpus", description="classes in the same group never hold GPUs at the same time")
    resubmission: Resubmission = Field(default_factory=Resubmission)
    submission: SubmissionSpec = Field(default_factory=SubmissionSpec)
    services: list[ServiceEntry] = Field(
        default_factory=list, description="kind service workloads deployed beside the wave (docs/services.md)")


# ---- queue congestion ----

class CongestionThresholds(StrictModel):
    max_wait_seconds: PositiveNumber = Field(description="longest acceptable wait from release to scheduling")
    explanation_coverage: Ratio = Field(default=1.0, description="share of waits the platform explained")
    min_eta_accuracy: Ratio = Field(default=0.5, description="share of ETAs within eta_tolerance_seconds")
    eta_tolerance_seconds: PositiveNumber = 30
    max_release_spread_seconds: PositiveNumber = 1.0
    min_samples: PositiveInt = 3
    max_partial_gang_seconds: NonNegativeNumber = Field(
        default=2, description="longest a gang may hold GPUs partly placed, fewer than min_available replicas "
        "running while another waits (the platform's timestamps have whole seconds)")
    max_gang_placement_seconds: PositiveNumber = Field(
        default=180, description="longest time from a gang's release until every one of its pods got its GPUs")
    deadlock_seconds: PositiveNumber = Field(
        default=90, description="GPUs held by a partly placed gang while no pod of the wave was placed or "
        "ended for this long is a deadlock (fails a must item)")


class QueueCongestion(ClassSpec):
    snapshot_interval_seconds: PositiveInt = 3
    replay: ReplaySpec | None = Field(default=None, description="the wave from a job history (instead of wave)")
    thresholds: CongestionThresholds


# ---- tenant isolation ----

class ProbeAction(str, Enum):
    LIST_PODS = "list_pods"
    GET_POD = "get_pod"
    READ_LOGS = "read_logs"
    READ_SECRETS = "read_secrets"
    READ_CONFIGMAPS = "read_configmaps"
    CREATE_POD = "create_pod"
    PATCH_QUOTA = "patch_quota"
    SCALE_SERVICE = "scale_service"     # another tenant's Deployment: patch deployments/scale (dry run)
    PATCH_SERVICE = "patch_service"     # another tenant's Service: patch it (dry run)
    PROXY_SERVICE = "proxy_service"     # another tenant's Service through the API server's proxy


class TenantPair(StrictModel):
    actor: str
    target: str


class AccessProbes(StrictModel):
    pairs: Literal["all"] | list[TenantPair] = "all"
    actions: list[ProbeAction] = Field(default_factory=lambda: list(ProbeAction), min_length=1)
    access_review: bool = True


class OverQuota(StrictModel):
    """A submission beyond the tenant's quota: blocked, queued or sent for approval (recorded)."""

    tenant: str
    workload: str
    count: PositiveInt = 1


class IsolationThresholds(StrictModel):
    max_cross_tenant_allowed: int = Field(default=0, ge=0)
    min_quota_samples: PositiveInt = 3
    min_share_ratio: Ratio = Field(default=0.25, description="each competing tenant gets at least this GPU share")
    fair_share_tolerance: Ratio = Field(
        default=0.15, description="largest difference between a tenant's share of the pool and its fair share "
        "(both as fractions of the pool) while the tenants competed")
    max_reclaim_seconds: PositiveNumber = Field(
        default=30, description="longest time from the lender's submission until its GPUs, lent to the borrower, "
        "are given back")
    max_slice_release_seconds: PositiveNumber = Field(
        default=30, description="longest time from a vGPU pod's end until the scheduler gives its slice of the card "
        "to the next pod that waits for it (vGPU slices probe, ISO-13)")


class FairShareTenant(StrictModel):
    """What a tenant is owed in the pool: its guaranteed GPUs, then the rest by weight among those who want more."""

    tenant: str
    weight: PositiveNumber = 1
    guaranteed_gpus: NonNegativeInt = 0


class FairShare(StrictModel):
    """The tenants competing for one pool and what each is owed (weighted max-min above the guarantees)."""

    pool: str
    tenants: list[FairShareTenant] = Field(min_length=2)


class Submission(StrictModel):
    """``count`` pods of a catalogue workload submitted by a probe as ``tenant``."""

    tenant: str
    workload: str
    count: PositiveInt = 1


class Reclaim(StrictModel):
    """After the wave: the borrower fills the pool beyond its guarantee, then the lender asks for GPUs within its
    own; the platform must take the lent GPUs back (preempting or evicting the borrower) within
    ``thresholds.max_reclaim_seconds``."""

    borrower: Submission
    lender: Submission
    borrow_timeout_seconds: PositiveInt = Field(
        default=60, description="how long the borrower may take to hold more than its guaranteed GPUs")


class TenantIsolation(ClassSpec):
    probes: AccessProbes = Field(default_factory=AccessProbes)
    over_quota: list[OverQuota] = Field(default_factory=list)
    quota_sample_interval_seconds: PositiveInt = 5
    fair_share: FairShare | None = Field(
        default=None, description="tenants competing in the wave and what each is owed; checked (fair share) "
        "when set")
    reclaim: Reclaim | None = Field(default=None, description="borrowed quota taken back for its lender; needs "
                                    "fair_share (pool and guarantees)")
    thresholds: IsolationThresholds = Field(default_factory=IsolationThresholds)


# ---- utilization ----

class UtilizationThresholds(StrictModel):
    min_samples: PositiveInt = 10
    idle_util_below: NonNegativeNumber = Field(default=5, description="GPU util % under which allocation is idle")
    min_views: PositiveInt = Field(default=5, description="views required: team, task type, pool, hour, memory")


class Utilization(ClassSpec):
    bucket_seconds: PositiveInt = Field(default=60, description="time bucket of the utilization table (shorter, down to the sampling step, when the run would fit in fewer than 4)")
    replay: ReplaySpec | None = Field(default=None, description="the wave from a job history (instead of wave)")
    sample_step_seconds: PositiveInt = 15
    thresholds: UtilizationThresholds = Field(default_factory=UtilizationThresholds)


# ---- fault recovery ----

class _Injection(StrictModel):
    workload: str
    tenant: str
    name: DnsLabel | None = Field(default=None, description="scenario name; defaults to the kind")

    @property
    def scenario(self) -> str:
        """The scenario's name in the evidence: ``name``, else the kind."""
        return self.name or self.kind  # type: ignore[attr-defined]  (every subclass has its kind)


class NonZeroExit(_Injection):
    kind: Literal["nonzero_exit"]


class MissingImage(_Injection):
    kind: Literal["missing_image"]
    observe_seconds: PositiveInt = 20


class OutOfMemory(_Injection):
    kind: Literal["oom"]


class Hang(_Injection):
    kind: Literal["hang"]
    timeout_seconds: PositiveInt


class NodeFailure(_Injection):
    kind: Literal["node_failure"]
    node: str | None = Field(default=None, description="a node name; else the node the workload runs on")
    pool: str | None = None
    at_seconds: NonNegativeNumber = Field(description="after the victim starts running")
    recover_after_seconds: PositiveNumber | None = 30
    injector: NodeInjector = Field(default_factory=SimInjector, description="how the node is failed: sim, "
                                   "command, taint or drain (gpupoc.plan.injector_spec)")
    fail_timeout_seconds: PositiveInt = Field(
        default=60, description="how long the victim's eviction may take after the injection (node monitor "
        "grace + the victim's unreachable tolerationSeconds + its termination grace)")

    @field_validator("injector", mode="before")
    @classmethod
    def _injector_shorthand(cls, v: object) -> object:
        return injector_shorthand(v)

    @property
    def scenario(self) -> str:
        """A drain is planned maintenance, not a failure: its scenario is ``node_drain`` unless named."""
        return self.name or ("node_drain" if self.injector.method == "drain" else self.kind)


Injection = Annotated[Union[NonZeroExit, MissingImage, OutOfMemory, Hang, NodeFailure], Field(discriminator="kind")]


class FaultThresholds(StrictModel):
    max_gpu_release_seconds: PositiveNumber = 30
    require_logs_readable: bool = True
    require_alerts: bool = True
    max_endpoint_removal_seconds: PositiveNumber = Field(
        default=10, description="longest a failed node's serving replica may stay a ready endpoint")
    max_replica_replacement_seconds: PositiveNumber = Field(
        default=90, description="longest from the node failure until a replacement replica is ready")
    max_slo_breach_seconds: NonNegativeInt = Field(
        default=20, description="most seconds of traffic that may miss the SLO around a node failure")


class FaultRecovery(ClassSpec):
    injections: list[Injection] = Field(min_length=1)
    service_failures: list[ServiceFailure] = Field(
        default_factory=list, description="node failures under a serving replica of the class's services")
    airflow_retries: int = Field(default=1, ge=0)
    thresholds: FaultThresholds = Field(default_factory=FaultThresholds)

    def service_injector(self, failure: ServiceFailure) -> NodeInjector:
        """How a service failure's node is failed: its own injector, else the class's node_failure injection's
        (the platform's one way to fail a node), else the simulated cluster's endpoint."""
        if failure.injector is not None:
            return failure.injector
        return next((i.injector for i in self.injections if isinstance(i, NodeFailure)), SimInjector())


# ---- audit trail ----

class QuotaChange(StrictModel):
    tenant: str
    gpus: PositiveInt
    restore: bool = True


class ArtifactHandOver(StrictModel):
    producer: WaveEntry
    consumer: WaveEntry
    path: str = Field(min_length=1, description="artifact path relative to the producer's artifact dir")


class AuditThresholds(StrictModel):
    min_match_ratio: Ratio = 1.0
    max_audit_delay_seconds: PositiveNumber = 10


class AuditTrail(ClassSpec):
    quota_change: QuotaChange | None = None
    artifact: ArtifactHandOver | None = None
    thresholds: AuditThresholds = Field(default_factory=AuditThresholds)


class TestClasses(StrictModel):
    __test__ = False

    queue_congestion: QueueCongestion
    tenant_isolation: TenantIsolation
    utilization: Utilization
    fault_recovery: FaultRecovery
    audit_trail: AuditTrail

    def items(self) -> list[tuple[TestClass, ClassSpec]]:
        return [(tc, getattr(self, tc.value)) for tc in TestClass]
