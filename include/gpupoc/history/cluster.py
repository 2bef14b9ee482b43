"""The cluster a history is replayed on, and which jobs of the history it can run.

A job is run as one pod per node (``node_num`` pods of ``gpu_num / node_num`` GPUs each). It fits a pool
when the pool has at least ``node_num`` nodes of at least that many GPUs. With only a GPU total
(``--cluster-gpus``) a job fits when its GPUs do not exceed the total.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpupoc.history.model import JobRecord, JobState, SkipReason


@dataclass(frozen=True)
class PoolShape:
    name: str
    gpus_per_node: int
    nodes: int

    @property
    def gpus(self) -> int:
        return self.gpus_per_node * self.nodes

    def fits(self, gpus_per_pod: int, pods: int) -> bool:
        return gpus_per_pod <= self.gpus_per_node and pods <= self.nodes


@dataclass(frozen=True)
class ClusterShape:
    """Pools with their node shape, or only a GPU total (``pools`` empty)."""

    total_gpus: int
    pools: tuple[PoolShape, ...] = ()

    @classmethod
    def from_plan(cls, plan) -> "ClusterShape":
        pools = tuple(PoolShape(p.name, p.gpus_per_node, p.nodes) for p in plan.pools)
        return cls(total_gpus=sum(p.gpus for p in pools), pools=pools)

    @classmethod
    def of_gpus(cls, total: int) -> "ClusterShape":
        return cls(total_gpus=total)

    def describe(self) -> str:
        if not self.pools:
            return f"{self.total_gpus} GPUs"
        return ", ".join(f"{p.name} {p.nodes}x{p.gpus_per_node}" for p in self.pools)

    def fitting_pools(self, job: JobRecord, among: tuple[str, ...] | None = None) -> list[str]:
        """Names of the pools (in order, optionally only ``among``) that can run ``job``."""
        per_pod = gpus_per_pod(job)
        return [p.name for p in self.pools if (among is None or p.name in among) and p.fits(per_pod, job.node_num)]

    def fits(self, job: JobRecord) -> bool:
        if not self.pools:
            return job.gpu_num <= self.total_gpus
        return bool(self.fitting_pools(job))


def gpus_per_pod(job: JobRecord) -> int:
    """GPUs of each of the job's pods (one pod per node)."""
    return job.gpu_num // max(job.node_num, 1)


def skip_reason(job: JobRecord, cluster: ClusterShape | None = None) -> SkipReason | None:
    """Why ``job`` cannot be replayed (the first reason that applies), or None.

    The order: never started, no run time, no GPU, GPUs not divisible by nodes, larger than the cluster.
    """
    if job.start_time is None and not job.duration_s:
        return SkipReason.NOT_STARTED
    if job.duration_s is None or job.duration_s <= 0:
        return SkipReason.NO_DURATION
    if job.gpu_num <= 0:
        return SkipReason.NO_GPU
    if job.gpu_num % max(job.node_num, 1):
        return SkipReason.UNEVEN_GPUS
    if cluster is not None and not cluster.fits(job):
        return SkipReason.TOO_LARGE
    return None


def replay_skip_reason(job: JobRecord, cluster: ClusterShape) -> SkipReason | None:
    """``skip_reason`` plus the state rule of a replay: states other than the five known ones are not replayed."""
    reason = skip_reason(job, cluster)
    if reason is None and job.state is JobState.OTHER:
        return SkipReason.STATE_OTHER
    return reason
