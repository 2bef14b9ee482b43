"""In-memory object store: Kubernetes objects as plain JSON dicts, resourceVersions, and watch fan-out.

Everything runs on one asyncio loop, so no locks are needed. Objects are stored exactly as the API
returns them. Controllers (scheduler, kubelet, Kueue) change objects through ``update`` so that every
change bumps the resourceVersion, reaches watchers and wakes the listeners.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable, ValuesView

from gpupoc.common import fastjson
from gpupoc.sim import clock

# resource plural -> (apiVersion, kind, namespaced)
RESOURCES: dict[str, tuple[str, str, bool]] = {
    "pods": ("v1", "Pod", True),
    "events": ("v1", "Event", True),
    "nodes": ("v1", "Node", False),
    "namespaces": ("v1", "Namespace", False),
    "resourcequotas": ("v1", "ResourceQuota", True),
    "serviceaccounts": ("v1", "ServiceAccount", True),
    "configmaps": ("v1", "ConfigMap", True),
    "secrets": ("v1", "Secret", True),
    "deployments": ("apps/v1", "Deployment", True),
    "replicasets": ("apps/v1", "ReplicaSet", True),
    "services": ("v1", "Service", True),
    "endpointslices": ("discovery.k8s.io/v1", "EndpointSlice", True),
    "poddisruptionbudgets": ("policy/v1", "PodDisruptionBudget", True),
    "priorityclasses": ("scheduling.k8s.io/v1", "PriorityClass", False),
    "roles": ("rbac.authorization.k8s.io/v1", "Role", True),
    "rolebindings": ("rbac.authorization.k8s.io/v1", "RoleBinding", True),
    "clusterroles": ("rbac.authorization.k8s.io/v1", "ClusterRole", False),
    "clusterrolebindings": ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", False),
    "workloads": ("kueue.x-k8s.io/v1beta1", "Workload", True),
    "clusterqueues": ("kueue.x-k8s.io/v1beta1", "ClusterQueue", False),
    "localqueues": ("kueue.x-k8s.io/v1beta1", "LocalQueue", True),
    "resourceflavors": ("kueue.x-k8s.io/v1beta1", "ResourceFlavor", False),
    # Volcano's by default; a KAI cluster's store says otherwise (``use_kinds``, ``modes.KINDS``)
    "queues": ("scheduling.volcano.sh/v1beta1", "Queue", False),
    "podgroups": ("scheduling.volcano.sh/v1beta1", "PodGroup", True),
}

Key = tuple[str, str]  # (namespace or "", name)


class Conflict(Exception):
    """The object already exists (create) or the resourceVersion is stale (update)."""


class NotFound(Exception):
    """No such object."""


class Gone(Exception):
    """The requested resourceVersion is older than the kept history (HTTP 410)."""


@dataclass
class Change:
    """One committed change: ``type`` is ADDED, MODIFIED or DELETED; ``obj`` a deep copy.

    ``line()`` is the change as one watch event line, encoded once however many watchers send it.
    """

    rv: int
    resource: str
    type: str
    obj: dict
    _line: bytes | None = field(default=None, repr=False, compare=False)

    def line(self) -> bytes:
        if self._line is None:
            self._line = watch_line(self.type, self.obj)
        return self._line


@dataclass
class Watch:
    """A watcher's queue of changes for one resource, optionally one namespace."""

    resource: str
    namespace: str | None
    queue: asyncio.Queue = field(default_factory=asyncio.Queue)

    def matches(self, change: Change) -> bool:
        if change.resource != self.resource:
            return False
        if self.namespace is None:
            return True
        return change.obj.get("metadata", {}).get("namespace") == self.namespace


class Store:
    """Objects per resource, a global resourceVersion, change history and watchers."""

    def __init__(self, history: int = 50_000):
        self.rv = 1
        self.kinds: dict[str, tuple[str, str, bool]] = dict(RESOURCES)  # resource -> (apiVersion, kind, namespaced)
        self._objects: dict[str, dict[Key, dict]] = {r: {} for r in RESOURCES}
        self._history: deque[Change] = deque(maxlen=history)
        self._watches: list[Watch] = []
        self._listeners: list[Callable[[Change], None]] = []

    def use_kinds(self, kinds: dict[str, tuple[str, str, bool]]) -> None:
        """Say what some resources are in this cluster (e.g. KAI's ``queues`` instead of Volcano's)."""
        for resource, kind in kinds.items():
            self.kinds[resource] = kind
            self._objects.setdefault(resource, {})

    # -- reads -------------------------------------------------------------------------------
    def get(self, resource: str, namespace: str | None, name: str) -> dict | None:
        """The stored object itself (not a copy): callers that change it must call ``update``."""
        return self._objects[resource].get((namespace or "", name))

    def list(self, resource: str, namespace: str | None = None, ordered: bool = True) -> list[dict]:
        """Stored objects of a resource, in one namespace when given, sorted by namespace and name (in no
        particular order unless ``ordered``)."""
        items = self._objects[resource]
        if namespace:
            objs = [o for (ns, _), o in items.items() if ns == namespace]
        else:
            objs = list(items.values())
        if ordered:
            objs.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        return objs

    def values(self, resource: str) -> ValuesView[dict]:
        """The stored objects of a resource in no particular order (cheaper than ``list`` for a scan)."""
        return self._objects[resource].values()

    def count(self, resource: str) -> int:
        return len(self._objects[resource])

    # -- writes ------------------------------------------------------------------------------
    def create(self, resource: str, obj: dict) -> dict:
        """Store a new object: fill apiVersion, kind, uid, resourceVersion and creationTimestamp."""
        api_version, kind, namespaced = self.kinds[resource]
        meta = obj.setdefault("metadata", {})
        ns = meta.get("namespace", "") if namespaced else ""
        if not namespaced:
            meta.pop("namespace", None)
        key = (ns, meta["name"])
        if key in self._objects[resource]:
            raise Conflict(f'{resource} "{meta["name"]}" already exists')
        obj["apiVersion"] = api_version
        obj["kind"] = kind
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", clock.rfc3339())
        self._objects[resource][key] = obj
        self._commit(resource, "ADDED", obj)
        return obj

    def update(self, resource: str, obj: dict, expect_rv: str | None = None) -> dict:
        """Record a change to a stored object (replacing it when a new dict is given)."""
        meta = obj["metadata"]
        key = (meta.get("namespace", "") if self.kinds[resource][2] else "", meta["name"])
        current = self._objects[resource].get(key)
        if current is None:
            raise NotFound(f'{resource} "{meta["name"]}" not found')
        if expect_rv and expect_rv != current["metadata"]["resourceVersion"]:
            raise Conflict(
                f'Operation cannot be fulfilled on {resource} "{meta["name"]}": the object has been modified; '
                "please apply your changes to the latest version and try again"
            )
        self._objects[resource][key] = obj
        self._commit(resource, "MODIFIED", obj)
        return obj

    def delete(self, resource: str, namespace: str | None, name: str) -> dict:
        key = (namespace or "" if self.kinds[resource][2] else "", name)
        obj = self._objects[resource].pop(key, None)
        if obj is None:
            raise NotFound(f'{resource} "{name}" not found')
        self._commit(resource, "DELETED", obj)
        return obj

    def _commit(self, resource: str, type_: str, obj: dict) -> None:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        change = Change(self.rv, resource, type_, fastjson.copy(obj))
        self._history.append(change)
        for w in self._watches:
            if w.matches(change):
                w.queue.put_nowait(change)
        for listener in self._listeners:
            listener(change)

    # -- watches -----------------------------------------------------------------------------
    def watch(self, resource: str, namespace: str | None, since_rv: int | None) -> tuple[Watch, list[Change]]:
        """Open a watch; returns it with the past changes newer than ``since_rv`` (raises Gone if too old)."""
        w = Watch(resource, namespace)
        backlog: list[Change] = []
        if since_rv is not None and since_rv < self.rv:
            oldest = self._history[0].rv if self._history else self.rv + 1
            if since_rv < oldest - 1:
                raise Gone(f"too old resource version: {since_rv} ({oldest - 1})")
            backlog = [c for c in self._history if c.rv > since_rv and w.matches(c)]
        self._watches.append(w)
        return w, backlog

    def unwatch(self, w: Watch) -> None:
        if w in self._watches:
            self._watches.remove(w)

    @property
    def watch_count(self) -> int:
        return len(self._watches)

    def add_listener(self, fn: Callable[[Change], None]) -> None:
        """Call ``fn`` synchronously after every committed change (controllers use it to wake up)."""
        self._listeners.append(fn)


def watch_line(type_: str, obj: dict) -> bytes:
    """One watch event as the API server streams it: a JSON object and a newline."""
    return fastjson.dumps({"type": type_, "object": obj}) + b"\n"


def json_copy(value):
    """Deep copy of JSON-like data (dicts, lists, scalars): several times faster than ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {k: json_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_copy(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return copy.deepcopy(value)


def strip_for_list(objs: Iterable[dict]) -> list[dict]:
    """Deep copies suitable for a list answer."""
    return [json_copy(o) for o in objs]
