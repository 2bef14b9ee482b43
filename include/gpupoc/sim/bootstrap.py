"""Create the cluster's initial objects from its config: nodes, namespaces, quotas, RBAC, the scheduler's queues."""

from __future__ import annotations

import base64
import secrets

from gpupoc.kube.labels import SIMULATED_ANNOTATION, TENANT_LABEL, TENANT_ROLE
from gpupoc.kube.resources import GPU
from gpupoc.sim import clock
from gpupoc.sim.cluster import ADMIN_USER, ClusterState
from gpupoc.sim.config import ClusterConfig, Pool
from gpupoc.sim import fault_profiles
from gpupoc.sim.controllers.loop import build_controllers
from gpupoc.sim.queue_objects import create_queues

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "gpupoc-system")


def bootstrap(state: ClusterState) -> None:
    """Install the planted fault profiles (``fault_profiles``), fill an empty store with everything the config
    declares, then build the controllers."""
    fault_profiles.install(state)
    cfg = state.config
    s = state.store
    for ns in SYSTEM_NAMESPACES + tuple(t.namespace for t in cfg.tenants):
        s.create("namespaces", namespace_obj(ns, tenant=cfg.tenant_by_namespace(ns) is not None))
    for i, pool in enumerate(cfg.pools):
        for j, name in enumerate(pool.node_names()):
            s.create("nodes", node_obj(cfg, pool, name, address=f"192.0.2.{10 * (i + 1) + j}"))
    for pc in cfg.priority_classes:
        s.create("priorityclasses", {
            "metadata": {"name": pc.name},
            "value": pc.value,
            "globalDefault": pc.global_default,
            "preemptionPolicy": pc.preemption_policy,
            "description": pc.description,
        })
    _rbac(state)
    for t in cfg.tenants:
        s.create("serviceaccounts", {"metadata": {"name": t.service_account, "namespace": t.namespace}})
        s.create("resourcequotas", {
            "metadata": {"name": t.quota_name, "namespace": t.namespace, "labels": {TENANT_LABEL: t.name}},
            "spec": {"hard": {f"requests.{GPU}": str(t.quota.gpus), "pods": str(t.quota.pods)}},
            "status": {
                "hard": {f"requests.{GPU}": str(t.quota.gpus), "pods": str(t.quota.pods)},
                "used": {f"requests.{GPU}": "0", "pods": "0"},
            },
        })
        secret = base64.b64encode(secrets.token_hex(16).encode()).decode()
        s.create("secrets", {
            "metadata": {"name": f"{t.name}-registry-token", "namespace": t.namespace},
            "type": "Opaque",
            "data": {"token": secret},
        })
        s.create("configmaps", {
            "metadata": {"name": "artifact-index", "namespace": t.namespace, "labels": {"gpupoc.io/artifacts": "true"}},
            "data": {},
        })
    create_queues(state)
    build_controllers(state)


def namespace_obj(name: str, tenant: bool) -> dict:
    labels = {"kubernetes.io/metadata.name": name}
    if tenant:
        labels[TENANT_LABEL] = name
    return {"metadata": {"name": name, "labels": labels}, "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"}}


def node_obj(cfg: ClusterConfig, pool: Pool, name: str, address: str) -> dict:
    """A Node as kubelet reports it, with the pool's labels, taints and GPU capacity."""
    now = clock.rfc3339()
    capacity = {
        "cpu": str(pool.cpu),
        "memory": f"{pool.memory_gib}Gi",
        "ephemeral-storage": "1843Gi",
        "pods": "110",
        GPU: str(pool.devices_per_node),
    }
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": f"sim-{pool.name}-{pool.gpus_per_node}gpu",
        "nvidia.com/gpu.count": str(pool.gpus_per_node),
        "nvidia.com/gpu.memory": str(pool.gpu.memory_mib),
        **pool.labels,
    }
    labels.update(pool.sharing.node_labels(pool.labels.get("nvidia.com/gpu.product")))

    def cond(type_: str, status: str, reason: str, message: str) -> dict:
        return {"type": type_, "status": status, "lastHeartbeatTime": now, "lastTransitionTime": now,
                "reason": reason, "message": message}

    return {
        "metadata": {"name": name, "labels": labels,
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0", SIMULATED_ANNOTATION: "true"}},
        "spec": {"podCIDR": "10.244.0.0/24",
                 "taints": [t.model_dump() for t in pool.taints] or None},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [
                cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": name, "systemUUID": name, "bootID": name,
                "kernelVersion": "6.1.0-sim", "osImage": "Ubuntu 22.04.4 LTS",
                "containerRuntimeVersion": "containerd://1.7.20", "kubeletVersion": cfg.kubernetes_version,
                "kubeProxyVersion": cfg.kubernetes_version, "operatingSystem": "linux", "architecture": "amd64",
            },
        },
    }


# a tenant's rights on its services (docs/services.md), as the "edit" ClusterRole grants them
_EDIT = ["get", "list", "watch", "create", "delete", "deletecollection", "patch", "update"]
SERVICE_RULES = [
    {"apiGroups": ["apps"], "resources": ["deployments", "replicasets", "deployments/scale", "replicasets/scale"],
     "verbs": _EDIT},
    {"apiGroups": ["apps"], "resources": ["deployments/status", "replicasets/status"],
     "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["services"], "verbs": _EDIT},
    {"apiGroups": [""], "resources": ["services/proxy", "pods/proxy"], "verbs": ["get", "create", "update", "patch",
                                                                                 "delete"]},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": _EDIT},
]


def _rbac(state: ClusterState) -> None:
    s = state.store
    s.create("clusterroles", {"metadata": {"name": "cluster-admin"},
                              "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                                        {"nonResourceURLs": ["*"], "verbs": ["*"]}]})
    s.create("clusterrolebindings", {
        "metadata": {"name": "kubeadm:cluster-admins"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "kubeadm:cluster-admins"},
                     {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": ADMIN_USER}],
    })
    s.create("clusterroles", {"metadata": {"name": "system:basic-user"}, "rules": [
        {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
         "verbs": ["create"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
        {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"], "verbs": ["get", "list", "watch"]},
        {"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/version", "/openapi", "/openapi/*"],
         "verbs": ["get"]},
    ]})
    s.create("clusterrolebindings", {
        "metadata": {"name": "system:basic-user"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:basic-user"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}],
    })
    for t in state.config.tenants:
        s.create("roles", {"metadata": {"name": TENANT_ROLE, "namespace": t.namespace}, "rules": [
            {"apiGroups": [""], "resources": ["pods"],
             "verbs": ["get", "list", "watch", "create", "delete", "patch", "update", "deletecollection"]},
            {"apiGroups": [""], "resources": ["pods/log", "pods/status", "events", "resourcequotas", "serviceaccounts"],
             "verbs": ["get", "list", "watch"]},
            {"apiGroups": [""], "resources": ["configmaps", "secrets"],
             "verbs": ["get", "list", "watch", "create", "update", "patch"]},
            {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads", "localqueues"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["visibility.kueue.x-k8s.io"], "resources": ["localqueues/pendingworkloads"], "verbs": ["get"]},
            *SERVICE_RULES,
        ]})
        s.create("rolebindings", {
            "metadata": {"name": f"{TENANT_ROLE}-{t.service_account}", "namespace": t.namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": TENANT_ROLE},
            "subjects": [{"kind": "ServiceAccount", "name": t.service_account, "namespace": t.namespace}],
        })
