"""Typed model of the queues a scheduler mode serves: Kueue's ClusterQueues and LocalQueues, Volcano's and
KAI's Queues. GPU amounts are whole GPUs; ``None`` (or KAI's ``-1``) means unlimited, as in each project.

Field names follow the objects they become (``ClusterQueue.spec.resourceGroups[].flavors[].resources[]``
``nominalQuota``/``borrowingLimit``/``lendingLimit``, ``spec.preemption``, ``spec.fairSharing.weight``;
Volcano ``Queue.spec.weight``/``capability``/``deserved``/``guarantee``/``reclaimable``; KAI
``Queue.spec.parentQueue``/``priority``/``resources.gpu.quota``/``overQuotaWeight``/``limit``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
UNLIMITED = -1  # KAI's UnlimitedResourceQuantity


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- Kueue ---------------------------------------------------------------------------------------
class KueuePreemption(_Model):
    """``ClusterQueue.spec.preemption`` (Kueue's defaults: Never everywhere)."""

    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "Never"
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = "Never"
    borrow_within_cohort: Literal["Never", "LowerPriority"] = "Never"
    max_priority_threshold: int | None = Field(
        default=None, description="borrowWithinCohort.maxPriorityThreshold: only workloads up to this priority")


class ClusterQueue(_Model):
    name: str = Field(pattern=DNS_LABEL)
    flavor: str = Field(pattern=DNS_LABEL, description="a pool name: the ResourceFlavor")
    nominal_gpus: NonNegativeInt
    queueing_strategy: Literal["BestEffortFIFO", "StrictFIFO"] = "BestEffortFIFO"
    cohort: str | None = Field(default=None, pattern=DNS_LABEL)
    borrowing_limit_gpus: NonNegativeInt | None = None
    lending_limit_gpus: NonNegativeInt | None = None
    preemption: KueuePreemption = Field(default_factory=KueuePreemption)
    fair_sharing_weight: float = Field(default=1.0, ge=0)

    @model_validator(mode="after")
    def _limits_need_a_cohort(self) -> "ClusterQueue":
        for what, value in (("borrowing_limit_gpus", self.borrowing_limit_gpus),
                            ("lending_limit_gpus", self.lending_limit_gpus)):
            if value is not None and self.cohort is None:
                raise ValueError(f"{what}: set only with a cohort (Kueue refuses limits on a ClusterQueue without "
                                 "one); add `cohort:` or drop the limit")
        if self.lending_limit_gpus is not None and self.lending_limit_gpus > self.nominal_gpus:
            raise ValueError(f"lending_limit_gpus: {self.lending_limit_gpus} exceeds nominal_gpus "
                             f"{self.nominal_gpus}; a queue lends at most its nominal quota")
        return self


class LocalQueue(_Model):
    name: str = Field(pattern=DNS_LABEL)
    namespace: str = Field(pattern=DNS_LABEL)
    cluster_queue: str


class KueueConfig(_Model):
    cluster_queues: list[ClusterQueue] = Field(default_factory=list)
    local_queues: list[LocalQueue] = Field(default_factory=list)
    fair_sharing: bool = Field(default=False, description="Kueue Configuration fairSharing.enable")


# -- Volcano -------------------------------------------------------------------------------------
class VolcanoQueue(_Model):
    """A ``scheduling.volcano.sh/v1beta1`` Queue. Without ``deserved_gpus`` the queue's deserved share is
    computed from ``weight`` (proportion plugin); with it, the share is fixed (capacity plugin)."""

    name: str = Field(pattern=DNS_LABEL)
    weight: PositiveInt = 1
    capability_gpus: NonNegativeInt | None = None
    deserved_gpus: NonNegativeInt | None = None
    guarantee_gpus: NonNegativeInt = 0
    reclaimable: bool = True
    priority: int = 0

    @model_validator(mode="after")
    def _ordered(self) -> "VolcanoQueue":
        cap = self.capability_gpus
        if cap is not None and self.guarantee_gpus > cap:
            raise ValueError(f"guarantee_gpus: {self.guarantee_gpus} exceeds capability_gpus {cap}")
        if self.deserved_gpus is not None:
            if cap is not None and self.deserved_gpus > cap:
                raise ValueError(f"deserved_gpus: {self.deserved_gpus} exceeds capability_gpus {cap}")
            if self.deserved_gpus < self.guarantee_gpus:
                raise ValueError(f"deserved_gpus: {self.deserved_gpus} is below guarantee_gpus {self.guarantee_gpus}")
        return self


class VolcanoConfig(_Model):
    queues: list[VolcanoQueue] = Field(default_factory=list)
    overcommit_factor: float = Field(default=1.2, gt=0, description="overcommit plugin's overcommit-factor")


# -- KAI ---------------------------------------------------------------------------------------------
class KaiQueue(_Model):
    """A ``scheduling.run.ai/v2`` Queue (GPU resources only; -1 is unlimited)."""

    name: str = Field(pattern=DNS_LABEL)
    parent: str | None = None
    display_name: str = ""
    priority: int = 100
    quota_gpus: float = Field(default=0, ge=UNLIMITED)
    over_quota_weight: float = Field(default=1, ge=0)
    limit_gpus: float = Field(default=UNLIMITED, ge=UNLIMITED)

    @model_validator(mode="after")
    def _limit_covers_quota(self) -> "KaiQueue":
        if self.limit_gpus != UNLIMITED and self.quota_gpus != UNLIMITED and self.limit_gpus < self.quota_gpus:
            raise ValueError(f"limit_gpus: {self.limit_gpus} is below quota_gpus {self.quota_gpus}")
        return self


class KaiConfig(_Model):
    queues: list[KaiQueue] = Field(default_factory=list)


def check_queue_references(errors: list[str], kueue: KueueConfig, volcano: VolcanoConfig, kai: KaiConfig,
                           pools: set[str], namespaces: set[str]) -> None:
    """Cross-checks of the queue sections (names resolve, no cycles); appends ``path: message`` lines."""
    cqs = {c.name for c in kueue.cluster_queues}
    for i, cq in enumerate(kueue.cluster_queues):
        if cq.flavor not in pools:
            errors.append(f"kueue.cluster_queues[{i}].flavor: unknown pool {cq.flavor!r}; one of {sorted(pools)}")
    for i, lq in enumerate(kueue.local_queues):
        if lq.cluster_queue not in cqs:
            errors.append(f"kueue.local_queues[{i}].cluster_queue: unknown cluster queue {lq.cluster_queue!r}")
        if lq.namespace not in namespaces:
            errors.append(f"kueue.local_queues[{i}].namespace: {lq.namespace!r} is no tenant namespace")
    _unique(errors, "kueue.cluster_queues", [c.name for c in kueue.cluster_queues])
    _unique(errors, "volcano.queues", [q.name for q in volcano.queues])
    _unique(errors, "kai.queues", [q.name for q in kai.queues])
    names = {q.name: q for q in kai.queues}
    for i, q in enumerate(kai.queues):
        if q.parent is None:
            continue
        parent = names.get(q.parent)
        if parent is None:
            errors.append(f"kai.queues[{i}].parent: unknown queue {q.parent!r}; one of {sorted(names)}")
        elif parent.parent is not None:
            errors.append(f"kai.queues[{i}].parent: {q.parent!r} has a parent itself; queues here have two levels "
                          "(a top-level queue and its leaves)")


def _unique(errors: list[str], what: str, names: list[str]) -> None:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            errors.append(f"{what}: duplicate name {n!r}")
        seen.add(n)
