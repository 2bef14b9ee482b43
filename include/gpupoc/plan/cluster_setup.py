"""What the cluster must hold for the POC beyond what the rest of the plan names (``cluster:``).

``gpupoc cluster manifests`` renders it (namespaces, service accounts, RBAC, quotas, priority classes, the
adapter's queues), ``gpupoc cluster kubeconfig`` mints the identities' tokens for the window, and
``gpupoc preflight`` checks it before the first run. The queue setup is the platform's own (the thing under
test): it is rendered only when the plan declares it, in the field names of each project's objects
(``gpupoc.kube.queues``, the same models the simulated cluster is configured with).
"""

from __future__ import annotations

from pydantic import Field

from gpupoc.common.fields import DnsLabel, NonNegativeNumber, PositiveInt, PositiveNumber, StrictModel
from gpupoc.kube.queues import KaiConfig, KueueConfig, VolcanoConfig, check_queue_references


class QueueSetup(StrictModel):
    """The adapter's queues as the platform should hold them; unset: not rendered, only their names checked."""

    kueue: KueueConfig | None = Field(default=None, description="ResourceFlavors (one per pool named by a "
                                      "ClusterQueue's flavor), ClusterQueues with their cohorts, LocalQueues")
    volcano: VolcanoConfig | None = Field(default=None, description="Volcano Queues (scheduling.volcano.sh)")
    kai: KaiConfig | None = Field(default=None, description="KAI Queues (scheduling.run.ai/v2), a top-level "
                                  "queue and one leaf per tenant")


class PreflightSettings(StrictModel):
    """How the preflight checks run (``gpupoc preflight`` and the first task of every class DAG)."""

    image_pull_timeout_seconds: PositiveInt = Field(
        default=180, description="how long one image's pull pod may take to start its container")
    image_recheck_hours: NonNegativeNumber = Field(
        default=24, description="an image pulled this recently (recorded under <evidence_root>/preflight) is "
        "not pulled again by a class DAG; 0: every class pulls its images")
    api_timeout_seconds: PositiveNumber = Field(default=10, description="per API request of the preflight")


class ClusterSetup(StrictModel):
    """The identities, queues and preflight settings of the cluster the POC runs on."""

    runner_service_account: DnsLabel = Field(
        default="gpupoc-runner", description="the pipeline's own identity, a ServiceAccount in platform.namespace "
        "(its kubeconfig context is platform.admin_context)")
    token_hours: PositiveNumber | None = Field(
        default=None, description="lifetime of the tokens `gpupoc cluster kubeconfig` mints; default: until the "
        "window's end plus a day")
    queues: QueueSetup = Field(default_factory=QueueSetup)
    preflight: PreflightSettings = Field(default_factory=PreflightSettings)


def check_cluster_setup(plan) -> list[str]:
    """Cross-checks of ``plan.cluster`` against the tenants, pools and adapter (``path: message`` lines)."""
    q = plan.cluster.queues
    errors: list[str] = []
    raw: list[str] = []
    check_queue_references(raw, q.kueue or KueueConfig(), q.volcano or VolcanoConfig(), q.kai or KaiConfig(),
                           {p.name for p in plan.pools}, {t.namespace for t in plan.tenants})
    errors += [f"cluster.queues.{line}" for line in raw]
    for i, t in enumerate(plan.tenants):
        errors += _tenant_queue_declared(q, i, t)
    return errors


def _tenant_queue_declared(q: QueueSetup, i: int, tenant) -> list[str]:
    """A tenant's queue name of each adapter whose setup the plan declares must be one of its queues."""
    out = []
    lq = tenant.queues.get("kueue")
    if q.kueue is not None and lq and not any(x.name == lq and x.namespace == tenant.namespace
                                              for x in q.kueue.local_queues):
        out.append(f"tenants[{i}].queues.kueue: LocalQueue {lq!r} in namespace {tenant.namespace!r} is not in "
                   "cluster.queues.kueue.local_queues; declare it there or fix the name")
    vq = tenant.queues.get("volcano")
    if q.volcano is not None and vq and vq not in {x.name for x in q.volcano.queues}:
        out.append(f"tenants[{i}].queues.volcano: Queue {vq!r} is not in cluster.queues.volcano.queues; "
                   "declare it there or fix the name")
    kq = tenant.queues.get("kai")
    leaves = {x.name for x in q.kai.queues if x.parent} if q.kai is not None else set()
    if q.kai is not None and kq and kq not in leaves:
        out.append(f"tenants[{i}].queues.kai: {kq!r} is no leaf queue (a queue with a parent) of "
                   "cluster.queues.kai.queues; declare it there with its parent or fix the name")
    return out
