"""The scenario's cluster objects, made as the administrator: namespaces, ServiceAccounts, a Role and its
binding, PriorityClasses, a tenant token by TokenRequest, the GPU node the pods go to, and the pod builder."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from gpupoc.fidelity.client import Answer, Kube
from gpupoc.podspec import labels as L

# the default plan's tenant namespaces and ServiceAccount: the audit policy rendered from the plan (which the
# real control plane runs with) logs their requests
TENANT_NS, OTHER_NS, QUOTA_NS = "team-nlp", "team-vision", "team-serving"
RUNNER = "runner"
GPU = "nvidia.com/gpu"
VIRTUAL_IMAGE = "gpupoc/virtual:1.0"
MISSING_IMAGE = "registry.invalid/fid/does-not-exist:1.0"
LOW, HIGH = "fid-low", "fid-high"


@dataclass
class Target:
    """The GPU node the scenario's pods are pinned to, its GPUs, and every node's name (for normalising)."""

    node: str
    gpus: int
    taints: list[dict]
    nodes: list[str] = field(default_factory=list)


def gpus_of(node: dict) -> int:
    try:
        return int(str(((node.get("status") or {}).get("allocatable") or {}).get(GPU, "0")))
    except ValueError:
        return 0


def choose_target(admin: Kube) -> Target:
    """The schedulable GPU node with the most GPUs (the first by name among equals)."""
    items = admin.get("/api/v1/nodes").body.get("items") or []
    names = [n["metadata"]["name"] for n in items]
    usable = [n for n in items if gpus_of(n) > 0 and not (n.get("spec") or {}).get("unschedulable")]
    if not usable:
        raise RuntimeError(f"no schedulable node with {GPU} among {names}; fix: start the cluster with GPU nodes")
    best = sorted(usable, key=lambda n: (-gpus_of(n), n["metadata"]["name"]))[0]
    return Target(best["metadata"]["name"], gpus_of(best), (best.get("spec") or {}).get("taints") or [], names)


def ensure(kube: Kube, path: str, body: dict) -> Answer:
    """Create ``body`` at ``path``; an object that already exists is kept (a rerun on the same cluster)."""
    answer = kube.post(path, body)
    if not answer.ok and answer.code != 409:
        raise RuntimeError(f"POST {path} answered {answer.code}: {answer.body.get('message', answer.body)}")
    return answer


def make_tenancy(admin: Kube) -> None:
    """Three namespaces, a ServiceAccount in two, a Role on pods (not secrets) bound in the tenant's, two
    priorities."""
    for ns in (TENANT_NS, OTHER_NS, QUOTA_NS):
        ensure(admin, "/api/v1/namespaces", {"metadata": {"name": ns}})
    for ns in (TENANT_NS, OTHER_NS):
        ensure(admin, f"/api/v1/namespaces/{ns}/serviceaccounts", {"metadata": {"name": RUNNER}})
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{TENANT_NS}"
    ensure(admin, f"{rbac}/roles", {"metadata": {"name": "fid-tenant"}, "rules": [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "create", "delete"]},
        {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]}]})
    ensure(admin, f"{rbac}/rolebindings", {
        "metadata": {"name": "fid-tenant"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "fid-tenant"},
        "subjects": [{"kind": "ServiceAccount", "name": RUNNER, "namespace": TENANT_NS}]})
    for name, value in ((LOW, 100), (HIGH, 100000)):
        ensure(admin, "/apis/scheduling.k8s.io/v1/priorityclasses",
               {"metadata": {"name": name}, "value": value, "description": "gpupoc fidelity scenario"})


def token_request(admin: Kube, namespace: str = TENANT_NS, audiences: list[str] | None = None,
                  seconds: int = 3600) -> Answer:
    spec: dict = {"expirationSeconds": seconds}
    if audiences:
        spec["audiences"] = audiences
    return admin.post(f"/api/v1/namespaces/{namespace}/serviceaccounts/{RUNNER}/token",
                      {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})


def pod(name: str, target: Target, gpus: int = 0, priority: str | None = None, image: str = VIRTUAL_IMAGE,
        mode: str = "long", seconds: int = 3600, grace: int = 1) -> dict:
    """A pod pinned to the target node (by its hostname label), tolerating that node's own taints. How it
    ends (``mode``: long, oom, image-pull) is said twice: the simulated kubelet's virtual image reads the env
    (WORKLOAD_*), the real control plane's KWOK stages the ``gpupoc.io/virtual-*`` annotations."""
    ends = {"oom": {L.VIRTUAL_END: "oom", L.VIRTUAL_RUN: f"{seconds}s", L.VIRTUAL_EXIT: "137"},
            "image-pull": {L.VIRTUAL_END: "image-pull", L.VIRTUAL_RUN: f"{seconds}s"}}.get(mode, {})
    resources = {"cpu": "100m", "memory": "64Mi"}
    limits = {"memory": "128Mi", **({GPU: str(gpus)} if gpus else {})}
    spec: dict = {
        "restartPolicy": "Never", "terminationGracePeriodSeconds": grace,
        "nodeSelector": {"kubernetes.io/hostname": target.node},
        "tolerations": [{"key": t["key"], "operator": "Exists", "effect": t["effect"]} for t in target.taints],
        "containers": [{"name": "main", "image": image, "imagePullPolicy": "IfNotPresent",
                        "env": [{"name": "WORKLOAD_MODE", "value": mode},
                                {"name": "WORKLOAD_DURATION_SECONDS", "value": str(seconds)}],
                        "resources": {"requests": {**resources, **({GPU: str(gpus)} if gpus else {})},
                                      "limits": limits}}]}
    if priority:
        spec["priorityClassName"] = priority
    return {"apiVersion": "v1", "kind": "Pod", "spec": spec, "metadata": {
        "name": name, "labels": {"app.kubernetes.io/part-of": "gpupoc-fidelity"},
        "annotations": ends}}


def until(fetch: Callable[[], object], done: Callable[[object], bool], seconds: float = 90.0,
          poll: float = 0.5) -> tuple[object, bool]:
    """Poll ``fetch`` until ``done`` holds of its value or ``seconds`` pass: (last value, whether it held)."""
    deadline = time.monotonic() + seconds
    while True:
        value = fetch()
        if done(value):
            return value, True
        if time.monotonic() > deadline:
            return value, False
        time.sleep(poll)
