"""What each test class, probe and preflight check asks of the Kubernetes API, as which identity.

This table is the one source of the RBAC that ``gpupoc cluster manifests`` renders and of the verbs
``gpupoc preflight`` asks each identity about (SelfSubjectAccessReview). A test
(``tests/integration/test_access_table.py``) runs every class and the preflight against a cluster whose only
RBAC is the rendered one, records every request their clients send, and compares both ways: nothing they need
is missing, nothing rendered goes unused. Needs marked ``kpo`` are the KubernetesPodOperator's own (Airflow
runs it; the demo on such a cluster exercises them).

Identities:
- the **runner** (``cluster.runner_service_account`` in ``platform.namespace``; kubeconfig context
  ``platform.admin_context``): releases the wave's gate, observes, collects, cleans up, changes a quota,
  injects node failures, asks SubjectAccessReviews;
- each **tenant** (``tenants[].service_account`` in its namespace; context ``tenants[].context``): submits and
  reads its own workloads, in its own namespace only.

Scopes: ``own`` (the tenant's namespace), ``tenants`` (every tenant namespace, for the runner), ``runner``
(``platform.namespace``), ``cluster`` (cluster-scoped resources).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable

from gpupoc.plan.classes import NodeFailure, TestClass
from gpupoc.plan.injector_spec import METHODS

PREFLIGHT = "preflight"  # the pseudo-class of the preflight's own requests
ALL_CLASSES = tuple(tc.value for tc in TestClass)
KUEUE = "kueue.x-k8s.io"
KUEUE_VISIBILITY = "visibility.kueue.x-k8s.io"
VOLCANO = "scheduling.volcano.sh"
KAI = "scheduling.run.ai"
SIM = "sim.gpupoc.io"
DRA = "resource.k8s.io"
AUTHZ = "authorization.k8s.io"


class Who(str, Enum):
    RUNNER = "runner"
    TENANT = "tenant"


class Scope(str, Enum):
    OWN = "own"          # a tenant's own namespace
    TENANTS = "tenants"  # every tenant namespace (the runner)
    RUNNER = "runner"    # platform.namespace
    CLUSTER = "cluster"  # cluster-scoped resources


# Conditions under which a need applies, by name (the rendered comments print the name).
def _adapter(*names: str) -> Callable:
    return lambda plan: plan.platform.adapter.value in names


def _gangs(plan) -> bool:
    from gpupoc.plan import class_items

    return plan.platform.adapter.value in ("volcano", "kai") and any(
        i.gang for tc in TestClass if plan.test_class(tc).enabled for i in class_items(plan, tc))


def _injector(kind: str) -> Callable:
    """A node failure injected by ``kind`` (the ``method`` of a node_failure's ``injector``,
    ``gpupoc.plan.injector_spec``)."""
    if kind not in METHODS:
        raise ValueError(f"unknown injector method {kind!r}; one of {METHODS} (gpupoc.plan.injector_spec)")

    def pred(plan) -> bool:
        spec = plan.test_classes.fault_recovery
        methods = [i.injector.method for i in spec.injections if isinstance(i, NodeFailure)]
        methods += [spec.service_injector(f).method for f in spec.service_failures]
        return spec.enabled and kind in methods
    return pred


def _bulk(plan) -> bool:
    """Some enabled class submits its wave in bulk shards (``plan.submission_spec``)."""
    from gpupoc.plan import class_items

    return any(plan.test_class(tc).enabled and plan.test_class(tc).submission.bulk(len(class_items(plan, tc)))
               for tc in TestClass)


def _services(*classes: str) -> Callable:
    """Some enabled class (of ``classes``, all when none is named) deploys services."""
    def pred(plan) -> bool:
        return any(plan.test_class(tc).enabled and plan.test_class(tc).services
                   for tc in TestClass if not classes or tc.value in classes)
    return pred


WHEN: dict[str, Callable] = {
    "a wave in bulk": _bulk,
    "always": lambda plan: True,
    "adapter kueue": _adapter("kueue"),
    "adapter volcano": _adapter("volcano"),
    "adapter kai": _adapter("kai"),
    "gpus dra": lambda plan: plan.platform.options.dra,
    "gangs through the Workload API": lambda plan: plan.platform.workload_api_gangs,
    "gangs under volcano or kai": _gangs,
    "node failure by the sim injector": _injector("sim"),
    "node failure by the taint injector": _injector("taint"),
    "node failure by the drain injector": _injector("drain"),
    "artifact hand-over": lambda plan: plan.test_classes.audit_trail.artifact is not None,
    "access reviews": lambda plan: plan.test_classes.tenant_isolation.probes.access_review,
    "services": _services(),
    "services in the audit class": _services("audit_trail"),
    "services in the isolation class": _services("tenant_isolation"),
}


@dataclass(frozen=True)
class Need:
    """One kind of request: ``verbs`` on ``group``/``resource`` (``pods/log`` for a subresource) in ``scope``."""

    who: Who
    scope: Scope
    group: str
    resource: str
    verbs: tuple[str, ...]
    classes: tuple[str, ...]
    used_by: str
    when: str = "always"
    kpo: bool = False  # asked only by the KubernetesPodOperator (Airflow), not by the package's own steps
    fallback: bool = False  # asked only when an earlier task failed to do it (the cleanup's sweep)

    def applies(self, plan) -> bool:
        enabled = {tc.value for tc in TestClass if plan.test_class(tc).enabled} | {PREFLIGHT}
        return bool(enabled & set(self.classes)) and WHEN[self.when](plan)


R, T = Who.RUNNER, Who.TENANT
QC, TI, UT, FR, AT = ALL_CLASSES
WAVE = ALL_CLASSES  # every class submits a wave through the shared steps
NEEDS: tuple[Need, ...] = (
    # ---- the tenants: their own workloads, in their own namespace ----
    Need(T, Scope.OWN, "", "pods", ("create", "get", "delete"), (*WAVE, PREFLIGHT),
         "submit workloads and probes' pods (over-quota, reclaim, faults, artifact consumer), read them back, "
         "delete them; the preflight's image pulls"),
    Need(T, Scope.OWN, "", "pods", ("list", "patch"), (*WAVE,),
         "KubernetesPodOperator: find its pod again (list by labels), label it once checked (patch)", kpo=True),
    Need(T, Scope.OWN, "", "pods", ("watch",), (*WAVE,),
         "bulk submission: one watch per shard of the tenant's pods", "a wave in bulk"),
    Need(T, Scope.OWN, "", "pods/log", ("get",), (*WAVE,),
         "read a workload's log as its user (operator, fault records, artifact manifest)"),
    Need(T, Scope.OWN, "", "events", ("list",), (*WAVE,),
         "KubernetesPodOperator: a failed pod's events in the task log", kpo=True),
    Need(T, Scope.OWN, "", "resourcequotas", ("get",), (TI,), "over-quota probe: the tenant reads its quota"),
    Need(T, Scope.OWN, "", "configmaps", ("get", "patch"), (AT,),
         "artifact hand-over: index the artifact in configmap artifact-index", "artifact hand-over"),
    Need(T, Scope.OWN, "apps", "deployments", ("create", "delete"), (*WAVE,),
         "the class's services: KubernetesCreateResourceOperator and KubernetesDeleteResourceOperator",
         "services", kpo=True),
    Need(T, Scope.OWN, "", "services", ("create", "delete"), (*WAVE,),
         "the class's services: KubernetesCreateResourceOperator and KubernetesDeleteResourceOperator",
         "services", kpo=True),
    Need(T, Scope.OWN, "apps", "deployments/scale", ("patch",), (AT,),
         "audit: the tenant scales its service up one replica and back", "services in the audit class"),
    # ---- the runner in every tenant namespace ----
    Need(R, Scope.TENANTS, "apps", "deployments", ("get", "list"), (*WAVE,),
         "services: each rollout (get), the observer's snapshots and the cleanup's sweep (list)", "services"),
    Need(R, Scope.TENANTS, "", "services", ("list",), (*WAVE,),
         "services: the cleanup's sweep for what a failed delete task left", "services"),
    Need(R, Scope.TENANTS, "apps", "deployments", ("delete",), (*WAVE,),
         "services: the cleanup deletes a Deployment a failed delete task left", "services", fallback=True),
    Need(R, Scope.TENANTS, "", "services", ("delete",), (*WAVE,),
         "services: the cleanup deletes a Service a failed delete task left", "services", fallback=True),
    Need(R, Scope.TENANTS, "apps", "deployments/scale", ("patch",), (TI,),
         "isolation: scale back a service another tenant scaled because the platform ignored the dry run",
         "services in the isolation class", fallback=True),
    Need(R, Scope.TENANTS, "", "services", ("patch",), (TI,),
         "isolation: take back a label another tenant set because the platform ignored the dry run",
         "services in the isolation class", fallback=True),
    Need(R, Scope.TENANTS, "discovery.k8s.io", "endpointslices", ("list",), (*WAVE,),
         "services: the observer's snapshots of each Service's ready endpoints", "services"),
    Need(R, Scope.TENANTS, "", "pods", ("get", "list", "patch", "deletecollection"), (*WAVE,),
         "observe and collect the wave (list, get), lift the wave's gate (patch), clean up (deletecollection by "
         "the run's selector)"),
    Need(R, Scope.TENANTS, DRA, "resourceclaims", ("get", "list"), (*WAVE,),
         "collect: the devices kube-scheduler allocated to each wave pod's claims", "gpus dra"),
    Need(R, Scope.TENANTS, "", "events", ("list",), (*WAVE,),
         "the platform's events about every wave pod (observe, collect, fault records)"),
    Need(R, Scope.TENANTS, "", "resourcequotas", ("get", "list", "patch"), (TI, AT),
         "quota samples and the over-quota probe (get, list); the administrator's quota change and its restore, "
         "and undoing a dry-run write a platform ignored (patch)"),
    Need(R, Scope.TENANTS, "", "secrets", ("list",), (TI,),
         "isolation probes: a real secret name to aim the cross-tenant attempts at"),
    Need(R, Scope.TENANTS, KUEUE, "workloads", ("list",), (*WAVE,),
         "observe and collect: each pod's Workload and its QuotaReserved message", "adapter kueue"),
    Need(R, Scope.TENANTS, KUEUE, "localqueues", ("get",), (PREFLIGHT,),
         "preflight: the tenants' LocalQueues exist", "adapter kueue"),
    Need(R, Scope.TENANTS, KUEUE, "localqueues", ("list",), (*WAVE,),
         "observe: the queue names a platform's message may name (explanations)", "adapter kueue"),
    Need(R, Scope.TENANTS, "", "resourcequotas", ("list",), (*WAVE,),
         "observe: the quota names a platform's message may name (explanations)"),
    Need(R, Scope.TENANTS, KUEUE_VISIBILITY, "localqueues/pendingworkloads", ("get",), (*WAVE,),
         "observe: each pending pod's position in its LocalQueue", "adapter kueue"),
    Need(R, Scope.TENANTS, VOLCANO, "podgroups", ("list", "create", "delete"), (*WAVE,),
         "gangs: each gang's PodGroup (create before its pods, delete at cleanup); observe their conditions",
         "adapter volcano"),
    Need(R, Scope.TENANTS, KAI, "podgroups", ("list", "create", "delete"), (*WAVE,),
         "gangs: each gang's PodGroup (create before its pods, delete at cleanup); observe their conditions",
         "adapter kai"),
    Need(R, Scope.TENANTS, "scheduling.k8s.io", "workloads", ("create", "delete"), (*WAVE,),
         "gangs: each gang's Workload of the Workload API (create before its pods, delete at cleanup)",
         "gangs through the Workload API"),
    Need(R, Scope.TENANTS, "scheduling.k8s.io", "podgroups", ("list", "create", "delete"), (*WAVE,),
         "gangs: each gang's PodGroup of the Workload API (create before its pods, delete at cleanup); observe "
         "their conditions", "gangs through the Workload API"),
    # ---- the runner in its own namespace ----
    Need(R, Scope.RUNNER, "", "configmaps", ("create",), (PREFLIGHT,),
         "preflight: the audit probe, a dry-run create of a ConfigMap, must show in the audit source"),
    # ---- the runner, cluster-scoped ----
    Need(R, Scope.CLUSTER, "", "nodes", ("list",), (*WAVE, PREFLIGHT),
         "record the platform (nodes, GPUs); preflight: the pools' labels, taints and capacity"),
    Need(R, Scope.CLUSTER, "", "namespaces", ("get",), (PREFLIGHT,), "preflight: the namespaces exist"),
    Need(R, Scope.CLUSTER, DRA, "resourceslices", ("list",), (*WAVE, PREFLIGHT),
         "record the platform (whether its GPUs are DRA devices, whatever the plan says); preflight: the pools' "
         "whole-card devices under DRA"),
    Need(R, Scope.CLUSTER, "scheduling.k8s.io", "priorityclasses", ("get", "list"), (*WAVE, PREFLIGHT),
         "record the priority classes; preflight: they exist with the plan's values"),
    Need(R, Scope.CLUSTER, AUTHZ, "subjectaccessreviews", ("create",), (TI,),
         "isolation: ask the API server whether each cross-tenant attempt should be allowed", "access reviews"),
    Need(R, Scope.CLUSTER, KUEUE, "clusterqueues", ("get",), (PREFLIGHT,),
         "preflight: the ClusterQueues exist and match the plan", "adapter kueue"),
    Need(R, Scope.CLUSTER, KUEUE, "clusterqueues", ("list",), (*WAVE,),
         "observe: the queue names a platform's message may name (explanations)", "adapter kueue"),
    Need(R, Scope.CLUSTER, KUEUE, "resourceflavors", ("list",), (*WAVE,),
         "observe: the flavor names a platform's message may name (explanations)", "adapter kueue"),
    Need(R, Scope.CLUSTER, KUEUE, "cohorts", ("list",), (*WAVE,),
         "observe: the cohort names a platform's message may name (explanations)", "adapter kueue"),
    Need(R, Scope.CLUSTER, KUEUE, "workloadpriorityclasses", ("list",), (*WAVE,),
         "observe: the priority names a platform's message may name (explanations)", "adapter kueue"),
    Need(R, Scope.CLUSTER, KUEUE, "resourceflavors", ("get",), (PREFLIGHT,),
         "preflight: the ResourceFlavors exist with the pools' node labels", "adapter kueue"),
    Need(R, Scope.CLUSTER, VOLCANO, "queues", ("get",), (PREFLIGHT,),
         "preflight: the tenants' Queues exist, open, and match the plan", "adapter volcano"),
    Need(R, Scope.CLUSTER, VOLCANO, "queues", ("list",), (*WAVE,),
         "observe: the queue names a platform's message may name (explanations)", "adapter volcano"),
    Need(R, Scope.CLUSTER, KAI, "queues", ("get",), (PREFLIGHT,),
         "preflight: the tenants' queues exist and match the plan", "adapter kai"),
    Need(R, Scope.CLUSTER, KAI, "queues", ("list",), (*WAVE,),
         "observe: the queue names a platform's message may name (explanations)", "adapter kai"),
    Need(R, Scope.CLUSTER, SIM, "nodes/fail", ("create",), (FR,),
         "node failure: the simulated cluster's admin endpoint", "node failure by the sim injector"),
    Need(R, Scope.CLUSTER, SIM, "nodes/recover", ("create",), (FR,),
         "node failure: the simulated cluster's admin endpoint", "node failure by the sim injector"),
    Need(R, Scope.CLUSTER, "", "nodes", ("get", "patch"), (FR,),
         "node failure: a NoExecute taint, read, set and removed", "node failure by the taint injector"),
    Need(R, Scope.CLUSTER, "", "nodes", ("get", "patch"), (FR,), "kubectl cordon, drain and uncordon",
         "node failure by the drain injector"),
    Need(R, Scope.CLUSTER, "", "pods", ("list",), (FR,), "kubectl drain: the node's pods",
         "node failure by the drain injector"),
    Need(R, Scope.TENANTS, "", "pods/eviction", ("create",), (FR,), "kubectl drain: evict the node's pods",
         "node failure by the drain injector"),
    Need(R, Scope.CLUSTER, "apps", "daemonsets", ("get",), (FR,), "kubectl drain --ignore-daemonsets",
         "node failure by the drain injector"),
)


def needs_for(plan, who: Who | None = None, test_class: str | None = None) -> list[Need]:
    """The needs that apply to ``plan`` (of one identity, of one class or the preflight)."""
    out = [n for n in NEEDS if n.applies(plan) and (who is None or n.who is who)]
    if test_class is not None:
        out = [n for n in out if test_class in n.classes]
    return out


def split_resource(resource: str) -> tuple[str, str]:
    """``pods/log`` -> (``pods``, ``log``)."""
    base, _, sub = resource.partition("/")
    return base, sub
