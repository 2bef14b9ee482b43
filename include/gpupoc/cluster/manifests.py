"""``gpupoc cluster manifests``: everything the plan expects the cluster to hold, as YAML for ``kubectl apply``.

In apply order: Namespaces, PriorityClasses, ServiceAccounts, RBAC (``cluster.rbac``), ResourceQuotas, the
artifact index ConfigMaps of the audit class, and the adapter's queues when ``cluster.queues`` declares them
(Kueue ResourceFlavors, ClusterQueues with their cohorts and LocalQueues; Volcano Queues; KAI Queues, after
each project's own types: ``gpupoc.kube.queue_objects`` builds them, for the simulated cluster too).
Under DRA GPUs, the ResourceClaimTemplates of the workloads that ask a share of their GPUs (``share_templates``).
The audit policy and the alert rules go to other files (``audit_policy``, ``alert_rules``): the API server
and Prometheus read those, not ``kubectl apply``.
"""

from __future__ import annotations

from gpupoc.cluster.rbac import rbac_documents
from gpupoc.cluster.yamldoc import Doc, render
from gpupoc.kube.labels import PART_OF, TENANT_LABEL
from gpupoc.kube.queue_objects import cluster_queue, kai_queue, volcano_queue
from gpupoc.kube.resources import GPU, GPU_QUOTA_KEY
from gpupoc.kube.schedulers import KAI_QUEUE_VERSION, KUEUE_VERSION, VOLCANO_VERSION
from gpupoc.pipeline.audit import ARTIFACT_INDEX


def quota_name(namespace: str) -> str:
    """The ResourceQuota the manifests create per tenant (the pipeline finds quotas by their GPU key)."""
    return f"{namespace}-gpu"


def _meta(name: str, namespace: str | None = None, **labels: str) -> dict:
    meta: dict = {"name": name, "labels": {**PART_OF, **labels}}
    if namespace:
        meta["namespace"] = namespace
    return meta


def namespaces(plan) -> list[Doc]:
    out = [Doc({"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(plan.platform.namespace)},
               "the pipeline's own namespace: the runner's ServiceAccount")]
    for t in plan.tenants:
        out.append(Doc({"apiVersion": "v1", "kind": "Namespace",
                        "metadata": _meta(t.namespace, **{TENANT_LABEL: t.name})}, f"tenant {t.name}"))
    return out


def priority_classes(plan) -> list[Doc]:
    return [Doc({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": _meta(pc.name),
                 "value": pc.value, "globalDefault": False,
                 "description": f"gpupoc POC priority class {pc.name}"}) for pc in plan.priority_classes]


def service_accounts(plan) -> list[Doc]:
    out = [Doc({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": _meta(plan.cluster.runner_service_account, plan.platform.namespace)},
               f"the runner: kubeconfig context {plan.platform.admin_context!r} (gpupoc cluster kubeconfig)")]
    for t in plan.tenants:
        out.append(Doc({"apiVersion": "v1", "kind": "ServiceAccount",
                        "metadata": _meta(t.service_account, t.namespace, **{TENANT_LABEL: t.name})},
                       f"tenant {t.name}: kubeconfig context {t.kube_context!r}"))
    return out


def quotas(plan) -> list[Doc]:
    return [Doc({"apiVersion": "v1", "kind": "ResourceQuota",
                 "metadata": _meta(quota_name(t.namespace), t.namespace, **{TENANT_LABEL: t.name}),
                 "spec": {"hard": {GPU_QUOTA_KEY: str(t.quota.gpus), "pods": str(t.quota.pods)}}},
                f"tenant {t.name}: tenants[].quota") for t in plan.tenants]


def artifact_indexes(plan) -> list[Doc]:
    """The ConfigMap the audit class's artifact hand-over indexes the artifact in (the tenant patches it)."""
    art = plan.test_classes.audit_trail.artifact
    if art is None or not plan.test_classes.audit_trail.enabled:
        return []
    namespaces = sorted({plan.tenant(art.producer.tenant).namespace})
    return [Doc({"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": _meta(ARTIFACT_INDEX, ns, **{"gpupoc.io/artifacts": "true"}), "data": {}},
                "audit class: the artifact hand-over's index") for ns in namespaces]


def _obj(api_version: str, kind: str, built: dict) -> dict:
    """A queue object as ``queue_objects`` builds it, for apply: no status, our labels."""
    return {"apiVersion": api_version, "kind": kind,
            "metadata": {**built["metadata"], "labels": dict(PART_OF)}, "spec": built["spec"]}


def queues(plan) -> list[Doc]:
    """The adapter's queues as ``cluster.queues`` declares them (nothing when it declares none)."""
    q, adapter = plan.cluster.queues, plan.platform.adapter.value
    if adapter == "kueue" and q.kueue is not None:
        return _kueue(plan, q.kueue)
    if adapter == "volcano" and q.volcano is not None:
        return [Doc(_obj(VOLCANO_VERSION, "Queue", volcano_queue(v)), f"Volcano queue {v.name}")
                for v in q.volcano.queues]
    if adapter == "kai" and q.kai is not None:
        children: dict[str, list[str]] = {}
        for k in q.kai.queues:
            if k.parent:
                children.setdefault(k.parent, []).append(k.name)
        return [Doc(_obj(KAI_QUEUE_VERSION, "Queue", kai_queue(k, children.get(k.name, []))),
                    f"KAI queue {k.name}" + (f" under {k.parent}" if k.parent else " (top level)"))
                for k in q.kai.queues]
    return []


def _kueue(plan, kq) -> list[Doc]:
    out = []
    for flavor in sorted({cq.flavor for cq in kq.cluster_queues}):
        pool = plan.pool(flavor)
        out.append(Doc({"apiVersion": KUEUE_VERSION, "kind": "ResourceFlavor", "metadata": _meta(flavor),
                        "spec": {"nodeLabels": dict(pool.node_selector)}},
                       f"Kueue flavor of pool {flavor}: its nodes by pools[].node_selector"))
    for cq in kq.cluster_queues:
        cohort = f", cohort {cq.cohort} (Kueue forms the cohort from the name)" if cq.cohort else ""
        out.append(Doc(_obj(KUEUE_VERSION, "ClusterQueue", cluster_queue(cq)),
                       f"Kueue ClusterQueue {cq.name}: {cq.nominal_gpus} {GPU} of flavor {cq.flavor}{cohort}"))
    for lq in kq.local_queues:
        out.append(Doc({"apiVersion": KUEUE_VERSION, "kind": "LocalQueue", "metadata": _meta(lq.name, lq.namespace),
                        "spec": {"clusterQueue": lq.cluster_queue}}, f"Kueue LocalQueue of {lq.namespace}"))
    return out


def share_templates(plan) -> list[Doc]:
    """Under DRA GPUs, the ResourceClaimTemplate of each workload asking a share of its GPUs, in every tenant
    namespace (``gpupoc.podspec.dra_share``)."""
    from gpupoc.podspec.dra_share import is_dra_share, share_template

    shared = [w for w in plan.workloads if is_dra_share(plan, w)]
    return [Doc(share_template(w, t.namespace, {**PART_OF, TENANT_LABEL: t.name}),
                f"tenant {t.name}: workloads {w.name}'s vgpu share ({w.vgpu.memory_mib} MiB of each of "
                f"{w.gpus} shared cards)") for t in plan.tenants for w in shared]


def manifest_documents(plan) -> list[Doc]:
    return [*namespaces(plan), *priority_classes(plan), *service_accounts(plan), *rbac_documents(plan),
            *quotas(plan), *artifact_indexes(plan), *queues(plan), *share_templates(plan)]


def render_manifests(plan, source: str = "") -> str:
    """The YAML ``kubectl apply -f`` takes."""
    q = plan.cluster.queues
    adapter = plan.platform.adapter.value
    note = ""
    if adapter not in ("kube-scheduler", "hami") and getattr(q, adapter.replace("-", "_"), None) is None:
        note = (f"\nNo queues rendered: cluster.queues.{adapter} is not declared; the preflight checks that the "
                f"tenants' queues (tenants[].queues.{adapter}) exist.")
    preamble = (f"What plan {plan.name!r} expects the cluster to hold{f' ({source})' if source else ''}.\n"
                "Apply as a cluster administrator: kubectl apply -f <this file>. Then: gpupoc cluster kubeconfig, "
                "gpupoc preflight." + note)
    return render(manifest_documents(plan), preamble)
