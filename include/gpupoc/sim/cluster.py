"""The whole simulated cluster's state: store, events, logs, GPUs, identities, faults (and the reactors they
replace, ``reactors``), behaviours, the audit log, the controllers (fields typed by their ports in ``ports``,
built by ``controllers.loop.build_controllers`` from ``bootstrap``), the hooks they registered, and the wake-up."""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from gpupoc.kube.resources import GPU
from gpupoc.kube.schedulers import KINDS, SchedulerMode
from gpupoc.sim.api_pressure import ApiPressure
from gpupoc.sim.audit import AuditLog
from gpupoc.sim.behaviours import Behaviour
from gpupoc.sim.config import ClusterConfig
from gpupoc.sim.events import EventRecorder
from gpupoc.sim.faults import Fault
from gpupoc.sim.inventory import Inventory
from gpupoc.sim.logs import LogStore
from gpupoc.sim.pod_network import Network
from gpupoc.sim.ports import (
    DevicePlugin, EventLookup, Hooks, NodeAgent, NodeFailure, PodReplacer, PodScheduler, QuotaUsage, Reconciler, WorkloadIndex)
from gpupoc.sim.reactors import Reactors
from gpupoc.sim.store import Store

ADMIN_USER = "kubernetes-admin"
ADMIN_GROUPS = ["kubeadm:cluster-admins", "system:authenticated"]


@dataclass(frozen=True)
class Identity:
    """Who a bearer token authenticates as. ``context`` is its kubeconfig context name."""

    context: str
    username: str
    groups: tuple[str, ...]
    uid: str
    namespace: str | None = None  # the tenant namespace, None for the admin
    extra: dict[str, list[str]] | None = None  # user.extra (a service-account token's credential id)


@dataclass
class ClusterState:
    """Everything the API server and the controllers share. One instance per served cluster."""

    config: ClusterConfig
    data_dir: Path
    faults: frozenset[Fault] = frozenset()  # the planted fault profiles: ``bootstrap`` installs them on ``reactors``
    behaviours: frozenset[Behaviour] = frozenset()
    behaviour_seed: int = 0  # fixes every seeded behaviour (release order, throttling, latency, watch cuts)
    store: Store = field(default_factory=Store)
    logs: LogStore = field(default_factory=LogStore)
    inventory: Inventory | None = None
    identities: dict[str, Identity] = field(default_factory=dict)  # token -> identity
    events: EventRecorder | None = None
    audit: AuditLog | None = None  # the API server's audit log; controllers' own writes go there too
    # -- controllers and indexes (``build_controllers``), each by its port ---------------------------
    scheduler: PodScheduler | None = None
    kueue: WorkloadIndex | None = None
    volcano: Reconciler | None = None  # scheduler mode volcano only
    kai: Reconciler | None = None  # scheduler mode kai only
    hami: Reconciler | None = None  # scheduler mode hami only
    device_plugin: DevicePlugin | None = None  # a plugin owning some pods' GPUs (HAMi's vGPUs)
    kubelet: NodeAgent | None = None
    recreator: PodReplacer | None = None  # the Job controller of the recreating behaviours
    event_index: EventLookup | None = None
    quota_usage: QuotaUsage | None = None
    hooks: Hooks = field(default_factory=Hooks)  # what the controllers registered to hear of each other
    reactors: Reactors = field(default_factory=Reactors)  # the decisions fault profiles replace (``reactors``)
    quota_rv: int = -1  # store resourceVersion of the last ResourceQuota status refresh
    node_failures: dict[str, NodeFailure] = field(default_factory=dict)  # failed node -> since when
    network: Network = field(default_factory=Network)  # pod and ClusterIP ranges (``pod_network.claim_network``)
    addons: dict[str, Reconciler] = field(default_factory=dict)  # controllers registered in ``loop.ADDONS``, by name
    controller_stats: dict[str, list[float]] = field(default_factory=dict)  # step -> [calls, seconds]
    api_pressure: ApiPressure = field(default_factory=ApiPressure)  # API first: controllers yield to bursts
    _wakeup: asyncio.Event | None = None

    def __post_init__(self) -> None:
        self.data_dir = Path(self.data_dir)
        self.faults = frozenset(self.faults)
        self.behaviours = frozenset(self.behaviours)
        self.store.use_kinds(KINDS.get(self.mode, {}))
        if self.inventory is None:
            self.inventory = Inventory.from_config(self.config)
        if self.events is None:
            self.events = EventRecorder(self.store)
        if self.audit is None:
            self.audit = AuditLog(self.audit_log_path, metadata_only=Behaviour.AUDIT_METADATA in self.behaviours)

    # -- controller wake-up ------------------------------------------------------------------
    def kick(self) -> None:
        """Ask the controllers to run a pass soon (something changed)."""
        if self._wakeup is not None:
            self._wakeup.set()

    async def wait_kick(self, timeout: float) -> None:
        """Sleep until ``kick`` or ``timeout``; used by the controller loop."""
        if self._wakeup is None:
            self._wakeup = asyncio.Event()
        try:
            await asyncio.wait_for(self._wakeup.wait(), timeout)
        except asyncio.TimeoutError:
            pass
        self._wakeup.clear()

    @property
    def mode(self) -> SchedulerMode:
        return self.config.scheduler

    def behaves(self, behaviour: Behaviour) -> bool:
        return behaviour in self.behaviours

    @property
    def audit_log_path(self) -> Path:
        p = Path(self.config.audit_log)
        return p if p.is_absolute() else self.data_dir / p

    def artifact_dir(self, namespace: str) -> Path:
        """The simulated persistent volume where a namespace's workloads write artifacts."""
        return self.data_dir / "volumes" / namespace / "artifacts"

    def identity_for_context(self, context: str) -> tuple[str, Identity]:
        for token, ident in self.identities.items():
            if ident.context == context:
                return token, ident
        raise KeyError(context)


def make_identities(config: ClusterConfig) -> dict[str, Identity]:
    """Fresh random bearer tokens: the admin and one service account per tenant."""
    out = {secrets.token_urlsafe(32): Identity("admin", ADMIN_USER, tuple(ADMIN_GROUPS), "admin-uid")}
    for t in config.tenants:
        groups = ("system:serviceaccounts", f"system:serviceaccounts:{t.namespace}", "system:authenticated")
        out[secrets.token_urlsafe(32)] = Identity(t.name, t.username, groups, f"sa-{t.namespace}", t.namespace)
    return out
