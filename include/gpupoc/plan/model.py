"""The POC plan: platform, tenants, pools and the workload catalogue (test classes live in classes.py)."""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import Field, model_validator

from gpupoc.common.fields import (
    DnsLabel,
    NonNegativeInt,
    PositiveInt,
    PositiveNumber,
    Quantity,
    StrictModel,
    quantity_value,
)
from gpupoc.plan.service_spec import ServiceSpec


class Adapter(str, Enum):
    """How workloads are handed to the platform's scheduler."""

    KUBE_SCHEDULER = "kube-scheduler"
    KUEUE = "kueue"
    VOLCANO = "volcano"
    KAI = "kai"
    HAMI = "hami"  # HAMi's vGPU scheduler: no queues; its webhook sets schedulerName on GPU pods


# Adapters that hand pods to the scheduler without a queue of their own.
QUEUELESS = frozenset({Adapter.KUBE_SCHEDULER, Adapter.HAMI})


# How the platform's GPUs reach the scheduler (``platform.options.gpus``): a device plugin's ``nvidia.com/gpu``
# capacity, or DRA devices in ResourceSlices that kube-scheduler allocates itself (Kubernetes v1.34+).
GPU_SOURCES = ("device-plugin", "dra")
DRA_ADAPTERS = frozenset({Adapter.KUBE_SCHEDULER, Adapter.KUEUE})  # served by kube-scheduler's DRA allocator


# The scheduler name each adapter sets on the pod unless the plan overrides it (None: leave the default).
DEFAULT_SCHEDULER_NAME = {
    Adapter.KUBE_SCHEDULER: None,
    Adapter.KUEUE: None,
    Adapter.VOLCANO: "volcano",
    Adapter.KAI: "kai-scheduler",
    Adapter.HAMI: "hami-scheduler",
}


class WorkloadKind(str, Enum):
    TRAINING = "training"
    INFERENCE = "inference"
    FAILING = "failing"
    IDLE = "idle"
    CROSS_TEAM = "cross-team"
    SERVICE = "service"  # a Deployment behind a Service, with traffic and an SLO (``service``)


class AdapterOptions(StrictModel):
    """Adapter specifics. Queue names are per tenant (``tenants[].queues``)."""

    scheduler_name: str | None = Field(
        default=None, description="overrides the adapter's scheduler name (volcano: 'volcano', kai: 'kai-scheduler')")
    kueue_priority_label: bool = Field(
        default=False, description="kueue: also set label kueue.x-k8s.io/priority-class (a WorkloadPriorityClass "
        "of the same name as the workload's priority class must exist)")
    gangs: Literal["adapter", "workload-api"] = Field(
        default="adapter", description="how a gang is grouped: 'adapter' (the adapter's own grouping; "
        "kube-scheduler has none) or 'workload-api' (kube-scheduler only: a Workload and PodGroup of "
        "scheduling.k8s.io/v1beta1, all or nothing by its GangScheduling plugin; Kubernetes >= 1.37 with the "
        "GenericWorkload gate: `--cluster kwok` starts it)")
    gpus: Literal["device-plugin", "dra"] = Field(
        default="device-plugin", description="device-plugin: the nodes advertise nvidia.com/gpu; dra: the GPUs are "
        "DRA devices (ResourceSlices) that kube-scheduler allocates, a pod's nvidia.com/gpu served by the "
        "DeviceClass's extended resource (needs the real control plane: --cluster kwok)")

    @property
    def dra(self) -> bool:
        return self.gpus == "dra"


class Platform(StrictModel):
    """The platform under test and how the pipeline reaches it."""

    name: str = Field(min_length=1)
    kubeconfig: str | None = Field(default=None, description="path; relative paths resolve against the plan file")
    kubernetes_conn_id: str | None = Field(default=None, description="an Airflow Kubernetes connection instead")
    in_cluster: bool = False
    admin_context: str | None = Field(default="admin", description="kubeconfig context of the administrator")
    adapter: Adapter = Adapter.KUBE_SCHEDULER
    options: AdapterOptions = Field(default_factory=AdapterOptions)
    namespace: DnsLabel = Field(default="gpupoc-system", description="namespace for the pipeline's own objects")
    simulated: bool | None = Field(
        default=None, description="true: the simulated cluster of `gpupoc sim serve`; unset: decided from the "
        "kubeconfig (one in a simulated cluster's data directory)")
    simulator_config: str | None = Field(
        default=None, description="the cluster file `gpupoc demo` starts the simulated cluster with (`gpupoc sim "
        "serve --config`), relative to the plan; unset: the shipped cluster of the adapter's mode")

    @model_validator(mode="after")
    def _one_access_method(self) -> "Platform":
        chosen = [n for n, v in (("kubeconfig", self.kubeconfig), ("kubernetes_conn_id", self.kubernetes_conn_id),
                                 ("in_cluster", self.in_cluster)) if v]
        if len(chosen) != 1:
            raise ValueError(f"set exactly one of kubeconfig, kubernetes_conn_id or in_cluster (set: {chosen or 'none'})")
        return self

    @model_validator(mode="after")
    def _workload_api_gangs_need_kube_scheduler(self) -> "Platform":
        if self.options.gangs == "workload-api" and self.adapter is not Adapter.KUBE_SCHEDULER:
            raise ValueError(f"options.gangs: workload-api groups gangs for kube-scheduler; adapter "
                             f"{self.adapter.value!r} has its own grouping (remove options.gangs or use adapter "
                             "kube-scheduler)")
        return self

    @property
    def workload_api_gangs(self) -> bool:
        return self.options.gangs == "workload-api"

    @property
    def scheduler_name(self) -> str | None:
        return self.options.scheduler_name or DEFAULT_SCHEDULER_NAME[self.adapter]


class PriorityClassRef(StrictModel):
    """A priority class the platform defines; ``value`` lets the pipeline reconstruct queue order offline."""

    name: DnsLabel
    value: int


class TenantQuota(StrictModel):
    gpus: PositiveInt
    pods: PositiveInt = 100


class Tenant(StrictModel):
    name: DnsLabel
    namespace: DnsLabel
    context: str | None = Field(default=None, description="kubeconfig context of the tenant's identity; "
                                "defaults to the tenant name")
    service_account: DnsLabel = "runner"
    quota: TenantQuota
    priority_classes: list[str] = Field(min_length=1)
    queues: dict[Literal["kueue", "volcano", "kai"], str] = Field(
        default_factory=dict, description="queue per adapter: kueue LocalQueue, volcano Queue, kai queue")

    @property
    def kube_context(self) -> str:
        return self.context or self.name

    @property
    def username(self) -> str:
        return f"system:serviceaccount:{self.namespace}:{self.service_account}"


class Toleration(StrictModel):
    key: str | None = None
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    toleration_seconds: NonNegativeInt | None = None


class Pool(StrictModel):
    name: DnsLabel
    node_selector: dict[str, str] = Field(min_length=1)
    tolerations: list[Toleration] = Field(default_factory=list)
    gpu_model: str = Field(min_length=1)
    gpus_per_node: PositiveInt
    nodes: PositiveInt
    node_names: list[str] = Field(default_factory=list, description="known node names (for node-failure injections)")

    @property
    def capacity_gpus(self) -> int:
        return self.gpus_per_node * self.nodes


class VgpuShare(StrictModel):
    """A slice of each GPU (HAMi's ``nvidia.com/gpumem``, ``nvidia.com/gpumem-percentage``, ``nvidia.com/gpucores``;
    Project-HAMi/HAMi chart ``values.yaml``): unset memory means the whole card, unset cores no core limit."""

    memory_mib: PositiveInt | None = Field(default=None, description="-> nvidia.com/gpumem (MiB per GPU)")
    memory_percentage: PositiveInt | None = Field(default=None, le=100,
                                                  description="-> nvidia.com/gpumem-percentage")
    cores: PositiveInt | None = Field(default=None, le=100, description="-> nvidia.com/gpucores (% of the SMs)")

    @model_validator(mode="after")
    def _one_memory_form(self) -> "VgpuShare":
        if self.memory_mib is not None and self.memory_percentage is not None:
            raise ValueError("set memory_mib or memory_percentage, not both (HAMi reads nvidia.com/gpumem first)")
        return self


class Workload(StrictModel):
    """One entry of the workload catalogue."""

    name: DnsLabel
    kind: WorkloadKind
    description: str = ""
    image: str = Field(min_length=1)
    command: list[str] = Field(default_factory=list)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    gpus: NonNegativeInt = 0
    cpu: Quantity = "1"
    cpu_limit: Quantity | None = None
    memory_request: Quantity = "1Gi"
    memory_limit: Quantity = "2Gi"
    duration_seconds: PositiveNumber = Field(description="expected run time once started")
    gpu_util: float | None = Field(default=None, ge=0, le=100, description="-> WORKLOAD_GPU_UTIL (%)")
    gpu_mem_mib: NonNegativeInt | None = Field(default=None, description="-> WORKLOAD_GPU_MEM_MIB")
    expected_exit_code: int | None = Field(default=0, description="None: never ends by itself (missing image, hang)")
    expected_reason: str | None = Field(default=None, description="e.g. Completed, Error, OOMKilled, ErrImagePull")
    task_type: DnsLabel
    pool: str
    priority_class: str
    active_deadline_seconds: PositiveInt | None = None
    replicas: PositiveInt = Field(default=1, description="pods of one run of the workload (multi-node training); "
                                  "more than one: submitted as one gang in the adapter's own grouping")
    min_available: PositiveInt | None = Field(
        default=None, description="pods that must run together for the gang to progress (default: replicas)")
    preemptible: bool | None = Field(
        default=None, description="kai: label kai.scheduler/preemptibility (preemptible workloads may go over "
        "their queue's quota); unset: the platform's default for the priority class")
    vgpu: VgpuShare | None = Field(default=None, description="hami: each GPU as a slice of a card's memory "
                                   "and cores (nvidia.com/gpumem, gpumem-percentage, gpucores)")
    service: ServiceSpec | None = Field(default=None,
                                        description="kind service only: port, readiness, traffic, SLO")

    @model_validator(mode="after")
    def _memory_limit_covers_request(self) -> "Workload":
        if quantity_value(self.memory_limit) < quantity_value(self.memory_request):
            raise ValueError(f"memory_limit {self.memory_limit} is below memory_request {self.memory_request}; "
                             "raise the limit or lower the request")
        return self

    @model_validator(mode="after")
    def _service_spec_with_kind_service(self) -> "Workload":
        if (self.kind == WorkloadKind.SERVICE) != (self.service is not None):
            raise ValueError(f"workload {self.name}: kind service needs a service: section (port, traffic, slo) "
                             "and only kind service may have one")
        return self

    @model_validator(mode="after")
    def _min_available_within_replicas(self) -> "Workload":
        if self.min_available is not None and self.min_available > self.replicas:
            raise ValueError(f"min_available {self.min_available} is above replicas {self.replicas}; a gang cannot "
                             "need more pods than it has: lower min_available or raise replicas")
        return self

    @property
    def gang_size(self) -> int:
        """Pods that must run together: ``min_available``, else every replica."""
        return self.min_available or self.replicas

    @property
    def is_gang(self) -> bool:
        """Replicas that run as one gang; a service's replicas are a Deployment's, each on its own."""
        return self.replicas > 1 and self.kind != WorkloadKind.SERVICE
