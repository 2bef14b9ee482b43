"""Who the platform's controllers are to the API server, and the audit events of their own writes.

In a real cluster the scheduler's preemption, the taint-eviction controller, Kueue and the Job controller
write through the API server like any client, so the audit log names them. The simulated controllers change
the store directly; ``audit_write`` puts the same record in the audit log (under the cluster's audit policy),
so that a POC can tell who deleted or created a pod.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpupoc.sim import clock
from gpupoc.sim.audit import AuditRecord
from gpupoc.sim.cluster import ClusterState


@dataclass(frozen=True)
class Actor:
    """A controller's identity: its username, groups, the User-Agent its client sends, and the
    ClusterRoleBinding (of a ClusterRole of the same name) that allows its writes."""

    username: str
    groups: tuple[str, ...]
    agent: str  # User-Agent product, e.g. "kube-scheduler"; the version comes from the cluster config
    binding: str
    subject: str  # as RBAC's reason names it: User "x" or ServiceAccount "name/namespace"


def service_account(namespace: str, name: str, agent: str, binding: str) -> Actor:
    user = f"system:serviceaccount:{namespace}:{name}"
    return Actor(user, ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"),
                 agent, binding, f'ServiceAccount "{name}/{namespace}"')


# kube-scheduler authenticates with its own certificate (user system:kube-scheduler).
KUBE_SCHEDULER = Actor("system:kube-scheduler", ("system:authenticated",), "kube-scheduler",
                       "system:kube-scheduler", 'User "system:kube-scheduler"')
# The taint-eviction controller runs with the node-controller's credentials (kube-controller-manager
# `startTaintEvictionController`: "taint-manager uses existing cluster role from node-controller").
TAINT_EVICTION = service_account("kube-system", "node-controller", "kube-controller-manager",
                                 "system:controller:node-controller")
JOB_CONTROLLER = service_account("kube-system", "job-controller", "kube-controller-manager",
                                 "system:controller:job-controller")
KUEUE = service_account("kueue-system", "kueue-controller-manager", "kueue", "kueue-manager-rolebinding")
VOLCANO = service_account("volcano-system", "volcano-scheduler", "vc-scheduler", "volcano-scheduler-role")
KAI = service_account("kai-scheduler", "kai-scheduler", "kai-scheduler", "kai-scheduler")

DELETE_OPTIONS = {"kind": "DeleteOptions", "apiVersion": "v1"}


def _pod_path(namespace: str, name: str = "", subresource: str = "") -> str:
    path = f"/api/v1/namespaces/{namespace}/pods"
    if name:
        path += f"/{name}"
    if subresource:
        path += f"/{subresource}"
    return path


def audit_write(state: ClusterState, actor: Actor, verb: str, pod: dict, *, subresource: str = "",
                request_object: object = None, code: int = 200, resource: str = "pods",
                api_path: str = "/api/v1") -> dict | None:
    """Record ``actor``'s ``verb`` on ``pod`` (create, patch, delete; ``subresource`` e.g. "status") in the
    audit log as the API server would; returns the written event (None when the policy drops it)."""
    if state.audit is None:
        return None
    meta = pod["metadata"]
    ns, name = meta.get("namespace", ""), meta["name"]
    now = clock.rfc3339_micro()
    user = {"username": actor.username, "groups": list(actor.groups)}
    agent = f"{actor.agent}/{state.config.kubernetes_version} (linux/amd64) kubernetes/sim"
    uri = _pod_path(ns, "" if verb == "create" and not subresource else name, subresource)
    if resource != "pods":
        uri = uri.replace("/api/v1/", f"{api_path}/", 1).replace("/pods", f"/{resource}", 1)
    rec = AuditRecord(request_uri=uri, verb=verb, user=user, source_ip="127.0.0.1", user_agent=agent, received=now,
                      resource=resource, api_group=api_path.split("/")[2] if api_path.startswith("/apis/") else "",
                      api_version=api_path.rsplit("/", 1)[-1], subresource=subresource, namespace=ns, name=name,
                      code=code,
                      decision="allow", reason=f'RBAC: allowed by ClusterRoleBinding "{actor.binding}" of ClusterRole '
                      f'"{actor.binding}" to {actor.subject}', request_object=request_object, response_object=pod,
                      object_uid=meta.get("uid", "") if subresource == "binding" else "")
    return state.audit.record(rec)


def audit_binding(state: ClusterState, actor: Actor, pod: dict, node: str) -> dict | None:
    """Record ``actor``'s bind of ``pod`` to ``node`` (a ``pods/binding`` create): the API server fills the
    record's ``objectRef.uid`` from the Binding, which names the pod's uid."""
    if state.audit is None:
        return None
    meta = pod["metadata"]
    binding = {"kind": "Binding", "apiVersion": "v1",
               "metadata": {"name": meta["name"], "namespace": meta.get("namespace", ""), "uid": meta.get("uid", "")},
               "target": {"kind": "Node", "name": node}}
    return audit_write(state, actor, "create", pod, subresource="binding", request_object=binding, code=201)
