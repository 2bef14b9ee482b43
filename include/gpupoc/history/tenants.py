"""Map the history's users (or virtual clusters) onto the plan's tenants by share of GPU time.

Each tenant's target share is its share of the plan's GPU quotas. Groups are taken most GPU time first
(greedy); each goes to the tenant furthest below its target among those that can run at least half of the
group's jobs (a tenant runs a job within its GPU quota that fits one of its pools). A job of the group its
tenant cannot run moves alone to the tenant furthest below target that can (counted as ``moved``); a job
no tenant can run has no tenant (the wave drops it as ``too_large_for_tenant``). A tenant's pools are the
pools of the catalogue workloads it submits in the plan's hand-written waves (all pools when it submits none;
a replayed class's wave comes from here, so it does not count).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from gpupoc.history.cluster import ClusterShape
from gpupoc.history.model import JobRecord


@dataclass(frozen=True)
class TenantTarget:
    name: str
    share: float
    quota_gpus: int
    pools: tuple[str, ...]

    def can_run(self, job: JobRecord, cluster: ClusterShape) -> bool:
        return job.gpu_num <= self.quota_gpus and bool(cluster.fitting_pools(job, among=self.pools))


@dataclass(frozen=True)
class Assignment:
    """One group of the history (a user or vc) and the tenant it replays as."""

    group: str
    tenant: str
    jobs: int
    gpu_seconds: float
    share: float
    moved: dict[str, int] = field(default_factory=dict)  # tenant -> jobs of the group its tenant cannot run


@dataclass(frozen=True)
class TenantMap:
    assignments: list[Assignment]
    job_tenant: dict[tuple[str, int], str]  # (job_id, source_row) -> tenant; absent: no tenant can run it

    def tenant_of(self, job: JobRecord) -> str | None:
        return self.job_tenant.get((job.job_id, job.source_row))


def tenant_targets(plan) -> list[TenantTarget]:
    """The plan's tenants with their target share (of the GPU quotas) and the pools they submit to."""
    pools: dict[str, set[str]] = defaultdict(set)
    for _, spec in plan.test_classes.items():
        for entry in spec.wave:
            pools[entry.tenant].add(plan.workload(entry.workload).pool)
    order = [p.name for p in plan.pools]
    total = sum(t.quota.gpus for t in plan.tenants)
    return [TenantTarget(name=t.name, share=t.quota.gpus / total, quota_gpus=t.quota.gpus,
                         pools=tuple(p for p in order if p in pools[t.name]) or tuple(order))
            for t in plan.tenants]


def map_groups(jobs: list[JobRecord], by: str, targets: list[TenantTarget], cluster: ClusterShape) -> TenantMap:
    """Greedy, most GPU time first (ties by name); see the module docstring."""
    by_group: dict[str, list[JobRecord]] = defaultdict(list)
    for job in jobs:
        by_group[job.group(by)].append(job)
    total = sum(j.gpu_seconds for j in jobs) or 1.0
    assigned = {t.name: 0.0 for t in targets}

    def furthest_below(candidates: list[TenantTarget]) -> TenantTarget:
        return max(candidates, key=lambda t: (t.share * total - assigned[t.name], -targets.index(t)))

    assignments, job_tenant = [], {}
    for group, members in sorted(by_group.items(), key=lambda kv: (-sum(j.gpu_seconds for j in kv[1]), kv[0])):
        runs = {t.name: sum(t.can_run(j, cluster) for j in members) for t in targets}
        candidates = ([t for t in targets if 2 * runs[t.name] >= len(members)]
                      or [t for t in targets if runs[t.name]] or targets)
        tenant = furthest_below(candidates)
        moved: Counter = Counter()
        for job in members:
            chosen = tenant
            if not tenant.can_run(job, cluster):
                capable = [t for t in targets if t.can_run(job, cluster)]
                if not capable:
                    continue
                chosen = furthest_below(capable)
                moved[chosen.name] += 1
            job_tenant[(job.job_id, job.source_row)] = chosen.name
            assigned[chosen.name] += job.gpu_seconds
        gpu_s = sum(j.gpu_seconds for j in members)
        assignments.append(Assignment(group=group, tenant=tenant.name, jobs=len(members), gpu_seconds=gpu_s,
                                      share=gpu_s / total, moved=dict(sorted(moved.items()))))
    return TenantMap(assignments=assignments, job_tenant=job_tenant)
