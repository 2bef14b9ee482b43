"""The simulated cluster's ports: the small interfaces through which its parts see each other, and the hooks
they register at bootstrap.

``ClusterState`` names its controllers by these Protocols, never by their classes, so no controller imports
another's module to reach it. Reactions between controllers are hooks (``Hooks``), registered by the
controller that reacts when it is built (``controllers.loop.build_controllers``):

- admission plug-ins (``AdmissionPlugin``): the API server's admission chain asks each to mutate a pod
  before it is stored and tells each once it is stored; Kueue's pod webhook registers itself; validating
  plug-ins (``ValidatingPlugin``) then may refuse it (the ``admission-refused`` fault's webhook);
- "pod disrupted": the platform took a pod away (preemption, reclaim, a lost node's eviction); the Job
  controller of the recreating behaviour profiles subscribes and replaces the pod;
- "pod replacing": a replacement for a taken-away pod is about to be stored; Kueue subscribes and hands the
  old pod's Workload to it.

As kwok's controllers get what they need of each other as functions, and client-go's fake clientset adds
behaviour as reactors, a new controller plugs in here without an edit of the others. What a fault profile
changes is a reactor (``reactors.Reactors``, on ``state.reactors``), installed by its module in ``fault_profiles``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Awaitable, Callable, Protocol

from gpupoc.sim.controllers.kueue_types import Entry
from gpupoc.sim.controllers.wording import Wording

Key = tuple[str, str]


# -- the controllers, as the cluster state holds them ------------------------------------------------------
class Placer(Protocol):
    """kube-scheduler's filters and free-GPU buckets, as a gang scheduler (Volcano, KAI) places through them."""

    moves: int  # grows with every change of the buckets: a fit computed before is stale

    @property
    def node_count(self) -> int: ...

    def refresh(self) -> int: ...

    def reserve(self, key: Key, pod: dict) -> str | None: ...

    def unreserve(self, node: str, pod: dict) -> None: ...

    def commit(self, key: Key, pod: dict, node: str, wording: Wording) -> None: ...

    def shape_of(self, pod: dict) -> tuple: ...

    def fit_counts(self, key: Key, pod: dict) -> Counter: ...

    def adjust(self, node: str, delta: int) -> None: ...


class PodScheduler(Placer, Protocol):
    """The cluster's kube-scheduler: a pass binds what fits (``controllers.scheduler.Scheduler``)."""

    def run_pass(self) -> int: ...


class Reconciler(Protocol):
    """A controller the loop runs one pass of each turn: a gang scheduler's sessions
    (``controllers.volcano.Volcano``, ``controllers.kai.Kai``) or a registered one (``controllers.loop.ADDONS``:
    ``taint_eviction.TaintEviction``, ``node_lifecycle.NodeLifecycle``)."""

    def run_pass(self) -> object: ...


class WorkloadIndex(Protocol):
    """Kueue's Workloads as other parts look them up (``controllers.kueue.Kueue``)."""

    entries: dict[Key, Entry]  # workload key -> entry
    by_pod: dict[Key, Key]  # pod key -> workload key
    dirty: bool  # the next pass runs an admission cycle

    def run_pass(self) -> int: ...


class PodReplacer(Protocol):
    """The Job controller of the recreating behaviour profiles (``controllers.recreate.Recreator``)."""

    @property
    def enabled(self) -> bool: ...

    def run_pass(self) -> int: ...


class NodeAgent(Protocol):
    """The kubelets of every node as one controller (``controllers.kubelet.Kubelet``)."""

    def reconcile(self) -> Awaitable[None]: ...

    def shutdown(self) -> Awaitable[None]: ...

    def evict(self, key: Key) -> None: ...


class EventLookup(Protocol):
    """Events by the object they are about (``api.indexes.EventIndex``)."""

    def events_about(self, namespace: str | None, name: str) -> list[dict]: ...


class QuotaUsage(Protocol):
    """What the namespace's counted pods request (``quota.UsageTracker``)."""

    def used(self, namespace: str, resource_name: str) -> Decimal: ...


class DevicePlugin(Protocol):
    """A device plugin that owns some pods' GPUs instead of the kubelet's whole-card allocation
    (``controllers.hami.HamiDevicePlugin``: vGPUs from the scheduler's annotations)."""

    def claims(self, pod: dict) -> bool:
        """Whether this plugin allocates ``pod``'s devices (the kubelet then skips its own GPU admission)."""

    def allocate(self, pod: dict, container: str) -> tuple[str, dict[str, str]]:
        """(``NVIDIA_VISIBLE_DEVICES``, the env the plugin injects) for one container of a claimed pod."""


class NodeFailure(Protocol):
    """A node failed and not yet recovered (``controllers.nodes.Failure``)."""

    since: float  # time.monotonic() of the failure


# -- hooks -------------------------------------------------------------------------------------------------
class AdmissionPlugin(Protocol):
    """A mutating admission plug-in of the API server's pod admission chain."""

    def mutate(self, pod: dict) -> None:
        """Change a pod about to be stored (labels, scheduling gates). Never raises: the pod is still stored."""

    def created(self, pod: dict) -> None:
        """The pod is stored (a Workload may be made for it). Never raises."""


class ValidatingPlugin(Protocol):
    """A validating admission plug-in (a validating webhook): runs after the mutating ones, may refuse."""

    def validate(self, pod: dict) -> None:
        """Raise the API server's ``StatusError`` to refuse the pod; return to let it be stored."""


class AuditSink(Protocol):
    """Another audit backend the audit log hands each event to (``audit_webhook.WebhookBackend``, which batches
    them to a webhook), registered on ``state.audit.sinks`` when the server starts."""

    def __call__(self, event: dict) -> None: ...

    def close(self) -> None: ...


PodListener = Callable[[dict], Any]
ReplacementListener = Callable[[Key, dict], Any]  # (the taken-away pod's key, its replacement before storing)


@dataclass
class Hooks:
    """What the cluster's parts registered to hear of each other (see the module docstring)."""

    admission: list[AdmissionPlugin] = field(default_factory=list)
    validating: list[ValidatingPlugin] = field(default_factory=list)
    disrupted: list[PodListener] = field(default_factory=list)
    replacing: list[ReplacementListener] = field(default_factory=list)

    def pod_disrupted(self, pod: dict) -> None:
        """The platform took ``pod`` away (it terminates or failed): tell every subscriber."""
        for listener in self.disrupted:
            listener(pod)

    def pod_replacing(self, old: Key, pod: dict) -> None:
        """``pod`` is about to be stored in place of the pod ``old``: tell every subscriber."""
        for listener in self.replacing:
            listener(old, pod)
