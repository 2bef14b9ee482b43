"""What the API serves: groups, versions and resources, with the attributes discovery reports."""

from __future__ import annotations

from dataclasses import dataclass, field

READ = ("get", "list", "watch")
ALL = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ResourceSpec:
    """One served resource; ``stored`` False for virtual resources (reviews, admin verbs)."""

    plural: str
    group: str
    version: str
    kind: str
    namespaced: bool
    verbs: tuple[str, ...]
    singular: str = ""
    short_names: tuple[str, ...] = ()
    subresources: dict[str, tuple[str, ...]] = field(default_factory=dict)
    stored: bool = True
    categories: tuple[str, ...] = ()

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


CORE = ""
RBAC = "rbac.authorization.k8s.io"
KUEUE = "kueue.x-k8s.io"
VISIBILITY = "visibility.kueue.x-k8s.io"
AUTHZ = "authorization.k8s.io"
SIM = "sim.gpupoc.io"

SPECS: list[ResourceSpec] = [
    ResourceSpec("pods", CORE, "v1", "Pod", True, ALL, "pod", ("po",),
                 {"log": ("get",), "status": ("get", "patch", "update"), "eviction": ("create",)},
                 categories=("all",)),
    ResourceSpec("events", CORE, "v1", "Event", True, ALL, "event", ("ev",)),
    ResourceSpec("nodes", CORE, "v1", "Node", False, ("create", "delete", "get", "list", "patch", "update", "watch"),
                 "node", ("no",), {"status": ("get", "patch", "update")}),
    ResourceSpec("namespaces", CORE, "v1", "Namespace", False, ("create", "delete", "get", "list", "patch", "update",
                                                               "watch"), "namespace", ("ns",),
                 {"status": ("get", "patch", "update")}),
    ResourceSpec("resourcequotas", CORE, "v1", "ResourceQuota", True, ALL, "resourcequota", ("quota",),
                 {"status": ("get", "patch", "update")}),
    ResourceSpec("serviceaccounts", CORE, "v1", "ServiceAccount", True, ALL, "serviceaccount", ("sa",)),
    ResourceSpec("configmaps", CORE, "v1", "ConfigMap", True, ALL, "configmap", ("cm",)),
    ResourceSpec("secrets", CORE, "v1", "Secret", True, ALL, "secret"),
    ResourceSpec("priorityclasses", "scheduling.k8s.io", "v1", "PriorityClass", False, ALL, "priorityclass", ("pc",)),
    ResourceSpec("roles", RBAC, "v1", "Role", True, READ, "role"),
    ResourceSpec("rolebindings", RBAC, "v1", "RoleBinding", True, READ, "rolebinding"),
    ResourceSpec("clusterroles", RBAC, "v1", "ClusterRole", False, READ, "clusterrole"),
    ResourceSpec("clusterrolebindings", RBAC, "v1", "ClusterRoleBinding", False, READ, "clusterrolebinding"),
    ResourceSpec("selfsubjectaccessreviews", AUTHZ, "v1", "SelfSubjectAccessReview", False, ("create",),
                 "selfsubjectaccessreview", stored=False),
    ResourceSpec("selfsubjectrulesreviews", AUTHZ, "v1", "SelfSubjectRulesReview", False, ("create",),
                 "selfsubjectrulesreview", stored=False),
    ResourceSpec("subjectaccessreviews", AUTHZ, "v1", "SubjectAccessReview", False, ("create",),
                 "subjectaccessreview", stored=False),
    ResourceSpec("workloads", KUEUE, "v1beta1", "Workload", True, READ, "workload", ("wl",),
                 {"status": ("get",)}, categories=("kueue",)),
    ResourceSpec("clusterqueues", KUEUE, "v1beta1", "ClusterQueue", False, READ, "clusterqueue", ("cq",),
                 {"status": ("get",)}, categories=("kueue",)),
    ResourceSpec("localqueues", KUEUE, "v1beta1", "LocalQueue", True, READ, "localqueue", ("lq", "queue", "queues"),
                 {"status": ("get",)}, categories=("kueue",)),
    ResourceSpec("resourceflavors", KUEUE, "v1beta1", "ResourceFlavor", False, READ, "resourceflavor",
                 ("flavor", "flavors", "rf"), categories=("kueue",)),
    ResourceSpec("clusterqueues", VISIBILITY, "v1beta2", "ClusterQueue", False, ("get",), "clusterqueue",
                 subresources={"pendingworkloads": ("get",)}, stored=False),
    ResourceSpec("localqueues", VISIBILITY, "v1beta2", "LocalQueue", True, ("get",), "localqueue",
                 subresources={"pendingworkloads": ("get",)}, stored=False),
    ResourceSpec("nodes", SIM, "v1", "Node", False, (), "node",
                 subresources={"fail": ("create",), "recover": ("create",)}, stored=False),
]

_BY_KEY = {(s.group, s.version, s.plural): s for s in SPECS}


def lookup(group: str, version: str, plural: str) -> ResourceSpec | None:
    return _BY_KEY.get((group, version, plural))


def group_versions() -> dict[str, list[str]]:
    """Served groups (excluding core) with their versions, in discovery order."""
    out: dict[str, list[str]] = {}
    for s in SPECS:
        if s.group and s.version not in out.setdefault(s.group, []):
            out[s.group].append(s.version)
    return out


def resources_of(group: str, version: str) -> list[ResourceSpec]:
    return [s for s in SPECS if s.group == group and s.version == version]


def list_kind(spec: ResourceSpec) -> str:
    return f"{spec.kind}List"
