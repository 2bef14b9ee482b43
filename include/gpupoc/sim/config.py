"""Typed model of the simulated cluster's configuration (pools, tenants, priorities, images, scheduler mode and
its queues: Kueue, Volcano or KAI, in ``gpupoc.kube.queues``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, NonNegativeInt, model_validator

from gpupoc.common.validation import load_yaml_model
from gpupoc.kube.queues import KaiConfig, KueueConfig, VolcanoConfig, check_queue_references
from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.sim.hami_config import HamiConfig
from gpupoc.sim.sharing_config import Sharing

DEFAULT_CONFIG = Path(__file__).with_name("default_cluster.yaml")

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Taint(_Model):
    key: str
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"


class GpuModel(_Model):
    model_name: str = Field(description="dcgm-exporter modelName, e.g. 'NVIDIA H100 80GB HBM3'")
    memory_mib: PositiveInt
    max_power_w: PositiveInt = 700
    idle_power_w: PositiveInt = 70


class Pool(_Model):
    name: str = Field(pattern=DNS_LABEL)
    gpu: GpuModel
    nodes: PositiveInt
    gpus_per_node: PositiveInt
    cpu: PositiveInt = 96
    memory_gib: PositiveInt = 1024
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[Taint] = Field(default_factory=list)
    sharing: Sharing = Field(default_factory=Sharing, description="none | time-slicing (replicas) | mig (profile)")

    @property
    def devices_per_node(self) -> int:
        """``nvidia.com/gpu`` the node advertises: cards x replicas or MIG instances."""
        return self.gpus_per_node * self.sharing.per_card

    def node_names(self) -> list[str]:
        return [f"{self.name}-node-{i}" for i in range(1, self.nodes + 1)]


class Quota(_Model):
    gpus: NonNegativeInt
    pods: PositiveInt = 100


class Tenant(_Model):
    name: str = Field(pattern=DNS_LABEL)
    namespace: str = Field(pattern=DNS_LABEL)
    service_account: str = Field(default="runner", pattern=DNS_LABEL)
    quota: Quota
    priority_classes: list[str] = Field(default_factory=list)

    @property
    def username(self) -> str:
        return f"system:serviceaccount:{self.namespace}:{self.service_account}"

    @property
    def quota_name(self) -> str:
        return f"{self.namespace}-gpu"


class PriorityClassConfig(_Model):
    name: str = Field(pattern=DNS_LABEL)
    value: int = Field(ge=-2147483648, le=1000000000)
    preemption_policy: Literal["PreemptLowerPriority", "Never"] = "PreemptLowerPriority"
    global_default: bool = False
    description: str = ""


class ImageEntry(_Model):
    """One image of the catalogue: ``process`` runs a local command, ``virtual`` only a lifecycle."""

    pattern: str = Field(description="fnmatch pattern over the image reference")
    kind: Literal["process", "virtual"]
    entrypoint: list[str] = Field(
        default_factory=list,
        description="process images: the image's ENTRYPOINT ('{python}' is this interpreter); empty runs the "
        "pod's command as a local command",
    )
    pull_seconds: float = Field(default=0.3, ge=0)


class Timing(_Model):
    """Controller timings in seconds (shortened from Kubernetes defaults so a POC fits a day)."""

    node_monitor_grace_seconds: float = Field(
        default=4.0, ge=0, description="a stopped kubelet's node is marked unreachable after this long "
        "(kube-controller-manager --node-monitor-grace-period, 40 s)")
    node_monitor_period_seconds: float = Field(
        default=1.0, gt=0, description="how often the node lifecycle controller clears the unreachable and "
        "not-ready NoExecute taints off Ready nodes (--node-monitor-period, 5 s)")
    image_backoff_seconds: float = Field(default=3.0, gt=0)
    scheduler_retry_seconds: float = Field(default=5.0, gt=0)
    termination_grace_seconds: float = Field(default=1.0, ge=0)
    metrics_interval_seconds: float = Field(default=1.0, gt=0)


class ClusterConfig(_Model):
    name: str = "gpupoc-sim"
    kubernetes_version: str = Field(default="v1.31.4", pattern=r"^v\d+\.\d+\.\d+")
    audit_log: str = Field(default="audit.log", description="relative paths resolve under the data directory")
    pools: list[Pool] = Field(min_length=1)
    tenants: list[Tenant] = Field(default_factory=list, description="empty: tenants come through the API "
                                  "(gpupoc cluster manifests | kubectl apply -f -)")
    priority_classes: list[PriorityClassConfig] = Field(default_factory=list)
    images: list[ImageEntry] = Field(default_factory=list)
    scheduler: SchedulerMode = Field(default=SchedulerMode.KUBE, description="kube | kueue | volcano | kai | hami")
    kueue: KueueConfig = Field(default_factory=KueueConfig)
    volcano: VolcanoConfig = Field(default_factory=VolcanoConfig)
    kai: KaiConfig = Field(default_factory=KaiConfig)
    hami: HamiConfig = Field(default_factory=HamiConfig)
    timing: Timing = Field(default_factory=Timing)
    empty: bool = Field(default=False, description="the cluster starts with its nodes only: tenants, priority "
                        "classes and queues come through its API (gpupoc sim serve --empty)")

    @model_validator(mode="after")
    def _references_resolve(self) -> "ClusterConfig":
        errors: list[str] = []
        _unique(errors, "pools", [p.name for p in self.pools])
        _unique(errors, "tenants", [t.name for t in self.tenants])
        _unique(errors, "tenants (namespace)", [t.namespace for t in self.tenants])
        _unique(errors, "priority_classes", [p.name for p in self.priority_classes])
        pcs = {p.name for p in self.priority_classes}
        for i, t in enumerate(self.tenants):
            for j, pc in enumerate(t.priority_classes):
                if pc not in pcs:
                    errors.append(f"tenants[{i}].priority_classes[{j}]: unknown priority class {pc!r}; "
                                  f"declare it under priority_classes ({sorted(pcs)})")
        check_queue_references(errors, self.kueue, self.volcano, self.kai, {p.name for p in self.pools},
                               {t.namespace for t in self.tenants})
        if self.empty:
            _empty_holds_nothing(errors, self)
        elif self.scheduler == SchedulerMode.KUEUE and not self.kueue.cluster_queues:
            errors.append("kueue.cluster_queues: scheduler kueue needs at least one ClusterQueue; declare them or "
                          "choose scheduler: kube")
        if not self.empty and self.scheduler == SchedulerMode.KAI and not any(q.parent for q in self.kai.queues):
            errors.append("kai.queues: scheduler kai needs at least one leaf queue (a queue with a parent); "
                          "declare a top-level queue and one leaf per tenant")
        if errors:
            raise ValueError("; ".join(errors))
        return self

    def tenant_by_namespace(self, namespace: str) -> Tenant | None:
        return next((t for t in self.tenants if t.namespace == namespace), None)

    def pool(self, name: str) -> Pool | None:
        return next((p for p in self.pools if p.name == name), None)


def _empty_holds_nothing(errors: list[str], cfg: "ClusterConfig") -> None:
    """An empty cluster declares no tenants, priority classes or queues: they come through the API."""
    declared = (("tenants", cfg.tenants), ("priority_classes", cfg.priority_classes),
                ("kueue.cluster_queues", cfg.kueue.cluster_queues), ("kueue.local_queues", cfg.kueue.local_queues),
                ("volcano.queues", cfg.volcano.queues), ("kai.queues", cfg.kai.queues))
    for what, items in declared:
        if items:
            errors.append(f"{what}: an empty cluster (empty: true) declares none; remove them or set empty: false")


def emptied(config: "ClusterConfig") -> "ClusterConfig":
    """``config`` with its nodes, images and timings only: what the API must then be given."""
    from gpupoc.common.validation import parse_model

    data = config.model_dump(mode="json")
    data.update(tenants=[], priority_classes=[], empty=True)
    for section, key in (("kueue", "cluster_queues"), ("kueue", "local_queues"), ("volcano", "queues"),
                         ("kai", "queues")):
        data[section][key] = []
    return parse_model(ClusterConfig, data, "--empty")


def _unique(errors: list[str], what: str, names: list[str]) -> None:
    seen = set()
    for n in names:
        if n in seen:
            errors.append(f"{what}: duplicate name {n!r}")
        seen.add(n)


def load_cluster_config(path: str | Path | None = None) -> ClusterConfig:
    """Load and validate a cluster config; the shipped default when ``path`` is None."""
    return load_yaml_model(ClusterConfig, path or DEFAULT_CONFIG, "cluster config")


CLUSTERS_DIR = Path(__file__).with_name("clusters")


def shipped_config(mode: SchedulerMode) -> Path:
    """The shipped cluster config of a scheduler mode: ``default_cluster.yaml`` for kube, else
    ``clusters/<mode>.yaml`` (same pools, tenants and priorities, with that scheduler's queues)."""
    return DEFAULT_CONFIG if mode == SchedulerMode.KUBE else CLUSTERS_DIR / f"{mode.value}.yaml"


def with_scheduler(config: ClusterConfig, mode: SchedulerMode, source: str = "--mode") -> ClusterConfig:
    """``config`` running ``mode`` instead of its own scheduler, validated again (a mode may need queues the
    config does not declare: the error names them)."""
    from gpupoc.common.validation import parse_model

    return parse_model(ClusterConfig, {**config.model_dump(mode="json"), "scheduler": mode.value}, source)
