"""What the API serves: groups, versions and resources, with the attributes discovery reports."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpupoc.kube.schedulers import KAI_GROUP, VOLCANO_GROUP, SchedulerMode

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
    modes: frozenset[SchedulerMode] | None = None  # scheduler modes that serve it; None: every mode

    def served_in(self, mode: SchedulerMode | None) -> bool:
        return self.modes is None or mode is None or mode in self.modes

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


CORE = ""
RBAC = "rbac.authorization.k8s.io"
KUEUE = "kueue.x-k8s.io"
VISIBILITY = "visibility.kueue.x-k8s.io"
AUTHZ = "authorization.k8s.io"
AUTHN = "authentication.k8s.io"
SIM = "sim.gpupoc.io"
APPS = "apps"
DISCOVERY = "discovery.k8s.io"
POLICY = "policy"
EVENTS = "events.k8s.io"
STATUS = {"status": ("get", "patch", "update")}
SCALE = {"status": ("get", "patch", "update"), "scale": ("get", "patch", "update")}
PROXY = {"proxy": ("create", "delete", "get", "patch", "update")}
_KUEUE_MODES = frozenset({SchedulerMode.KUBE, SchedulerMode.KUEUE})
_VOLCANO = frozenset({SchedulerMode.VOLCANO})
_KAI = frozenset({SchedulerMode.KAI})

SPECS: list[ResourceSpec] = [
    ResourceSpec("pods", CORE, "v1", "Pod", True, ALL, "pod", ("po",),
                 {"log": ("get",), "status": ("get", "patch", "update"), "eviction": ("create",), **PROXY},
                 categories=("all",)),
    ResourceSpec("events", CORE, "v1", "Event", True, ALL, "event", ("ev",)),
    ResourceSpec("events", EVENTS, "v1", "Event", True, ("get", "list"), "event", stored=False),  # api/events_v1
    ResourceSpec("nodes", CORE, "v1", "Node", False, ("create", "delete", "get", "list", "patch", "update", "watch"),
                 "node", ("no",), {"status": ("get", "patch", "update")}),
    ResourceSpec("namespaces", CORE, "v1", "Namespace", False, ("create", "delete", "get", "list", "patch", "update",
                                                               "watch"), "namespace", ("ns",),
                 {"status": ("get", "patch", "update")}),
    ResourceSpec("resourcequotas", CORE, "v1", "ResourceQuota", True, ALL, "resourcequota", ("quota",),
                 {"status": ("get", "patch", "update")}),
    ResourceSpec("serviceaccounts", CORE, "v1", "ServiceAccount", True, ALL, "serviceaccount", ("sa",),
                 {"token": ("create",)}),  # TokenRequest (api/tokens.py)
    ResourceSpec("configmaps", CORE, "v1", "ConfigMap", True, ALL, "configmap", ("cm",)),
    ResourceSpec("secrets", CORE, "v1", "Secret", True, ALL, "secret"),
    # services (docs/services.md): apps/v1 workloads, Services and their EndpointSlices, disruption budgets
    ResourceSpec("deployments", APPS, "v1", "Deployment", True, ALL, "deployment", ("deploy",), SCALE,
                 categories=("all",)),
    ResourceSpec("replicasets", APPS, "v1", "ReplicaSet", True, ALL, "replicaset", ("rs",), SCALE,
                 categories=("all",)),
    ResourceSpec("services", CORE, "v1", "Service", True, ALL, "service", ("svc",), {**STATUS, **PROXY},
                 categories=("all",)),
    ResourceSpec("endpointslices", DISCOVERY, "v1", "EndpointSlice", True, ALL, "endpointslice"),
    ResourceSpec("poddisruptionbudgets", POLICY, "v1", "PodDisruptionBudget", True, ALL, "poddisruptionbudget",
                 ("pdb",), STATUS),
    ResourceSpec("priorityclasses", "scheduling.k8s.io", "v1", "PriorityClass", False, ALL, "priorityclass", ("pc",)),
    ResourceSpec("roles", RBAC, "v1", "Role", True, ALL, "role"),
    ResourceSpec("rolebindings", RBAC, "v1", "RoleBinding", True, ALL, "rolebinding"),
    ResourceSpec("clusterroles", RBAC, "v1", "ClusterRole", False, ALL, "clusterrole"),
    ResourceSpec("clusterrolebindings", RBAC, "v1", "ClusterRoleBinding", False, ALL, "clusterrolebinding"),
    ResourceSpec("selfsubjectaccessreviews", AUTHZ, "v1", "SelfSubjectAccessReview", False, ("create",),
                 "selfsubjectaccessreview", stored=False),
    ResourceSpec("selfsubjectrulesreviews", AUTHZ, "v1", "SelfSubjectRulesReview", False, ("create",),
                 "selfsubjectrulesreview", stored=False),
    ResourceSpec("subjectaccessreviews", AUTHZ, "v1", "SubjectAccessReview", False, ("create",),
                 "subjectaccessreview", stored=False),
    ResourceSpec("selfsubjectreviews", AUTHN, "v1", "SelfSubjectReview", False, ("create",), "selfsubjectreview",
                 stored=False),  # kubectl auth whoami (api/tokens.py)
    ResourceSpec("workloads", KUEUE, "v1beta1", "Workload", True, ALL, "workload", ("wl",), STATUS,
                 categories=("kueue",), modes=_KUEUE_MODES),
    ResourceSpec("clusterqueues", KUEUE, "v1beta1", "ClusterQueue", False, ALL, "clusterqueue", ("cq",), STATUS,
                 categories=("kueue",), modes=_KUEUE_MODES),
    ResourceSpec("localqueues", KUEUE, "v1beta1", "LocalQueue", True, ALL, "localqueue", ("lq", "queue", "queues"),
                 STATUS, categories=("kueue",), modes=_KUEUE_MODES),
    ResourceSpec("resourceflavors", KUEUE, "v1beta1", "ResourceFlavor", False, ALL, "resourceflavor",
                 ("flavor", "flavors", "rf"), categories=("kueue",), modes=_KUEUE_MODES),
    ResourceSpec("clusterqueues", VISIBILITY, "v1beta2", "ClusterQueue", False, ("get",), "clusterqueue",
                 subresources={"pendingworkloads": ("get",)}, stored=False, modes=_KUEUE_MODES),
    ResourceSpec("localqueues", VISIBILITY, "v1beta2", "LocalQueue", True, ("get",), "localqueue",
                 subresources={"pendingworkloads": ("get",)}, stored=False, modes=_KUEUE_MODES),
    # Volcano (volcano.sh/apis scheduling/v1beta1): Queue has a status subresource, PodGroup has none.
    ResourceSpec("queues", VOLCANO_GROUP, "v1beta1", "Queue", False, ALL, "queue", ("q", "queue-v1beta1"), STATUS,
                 modes=_VOLCANO),
    ResourceSpec("podgroups", VOLCANO_GROUP, "v1beta1", "PodGroup", True, ALL, "podgroup", ("pg", "podgroup-v1beta1"),
                 modes=_VOLCANO),
    # KAI (NVIDIA/KAI-Scheduler pkg/apis/scheduling): Queue v2 and PodGroup v2alpha2, both with status.
    ResourceSpec("queues", KAI_GROUP, "v2", "Queue", False, ALL, "queue", (), STATUS, modes=_KAI),
    ResourceSpec("podgroups", KAI_GROUP, "v2alpha2", "PodGroup", True, ALL, "podgroup", ("pg",), STATUS, modes=_KAI),
    ResourceSpec("nodes", SIM, "v1", "Node", False, (), "node",
                 subresources={"fail": ("create",), "recover": ("create",), "stop-kubelet": ("create",),
                               "start-kubelet": ("create",)}, stored=False),
]

_BY_KEY = {(s.group, s.version, s.plural): s for s in SPECS}


def lookup(group: str, version: str, plural: str, mode: SchedulerMode | None = None) -> ResourceSpec | None:
    """The resource served at group/version/plural in ``mode`` (every mode's when None)."""
    spec = _BY_KEY.get((group, version, plural))
    return spec if spec is not None and spec.served_in(mode) else None


def group_versions(mode: SchedulerMode | None = None) -> dict[str, list[str]]:
    """Served groups (excluding core) with their versions, in discovery order."""
    out: dict[str, list[str]] = {}
    for s in SPECS:
        if s.group and s.served_in(mode) and s.version not in out.setdefault(s.group, []):
            out[s.group].append(s.version)
    return out


def resources_of(group: str, version: str, mode: SchedulerMode | None = None) -> list[ResourceSpec]:
    return [s for s in SPECS if s.group == group and s.version == version and s.served_in(mode)]


def list_kind(spec: ResourceSpec) -> str:
    return f"{spec.kind}List"
