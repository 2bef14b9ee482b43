"""Which pods belong to which PodGroup, for the gang schedulers (Volcano, KAI), kept from store changes.

A ``GroupIndex`` follows the pods that name one scheduler (``spec.schedulerName``). A pod belongs to the
PodGroup its annotation names (``group_keys``, the first one set); a pod without it is *ungrouped* until
the scheduler's controller makes it a PodGroup and writes the annotation. Each group keeps its members by
state: ``pending`` (unbound, Pending, ungated, not terminating), ``gated``, ``active`` (bound and not
terminal), ``releasing`` (bound and terminating), ``succeeded``, ``failed``. ``version`` grows whenever a
member changes state, so a scheduler knows when a new session is worth running.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpupoc.sim.controllers.scheduling import gpu_request
from gpupoc.sim.store import Change, Store

Key = tuple[str, str]
STATES = ("pending", "gated", "active", "releasing", "succeeded", "failed")


@dataclass
class Group:
    """The members of one PodGroup ``key`` (namespace, name) by state, and each member's GPUs."""

    key: Key
    members: dict[str, set[Key]] = field(default_factory=lambda: {s: set() for s in STATES})
    gpus: dict[Key, int] = field(default_factory=dict)

    def count(self, *states: str) -> int:
        return sum(len(self.members[s]) for s in states)

    def gpus_of(self, *states: str) -> int:
        return sum(self.gpus.get(k, 0) for s in states for k in self.members[s])

    @property
    def empty(self) -> bool:
        return not any(self.members.values())


def pod_state(pod: dict, deleted: bool) -> str | None:
    """The member state of a pod (None once deleted)."""
    if deleted:
        return None
    meta, spec, status = pod["metadata"], pod.get("spec", {}), pod.get("status", {})
    phase = status.get("phase", "Pending")
    if phase == "Succeeded":
        return "succeeded"
    if phase == "Failed":
        return "failed"
    if spec.get("nodeName"):
        return "releasing" if meta.get("deletionTimestamp") else "active"
    if meta.get("deletionTimestamp"):
        return "releasing"
    return "gated" if spec.get("schedulingGates") else "pending"


class GroupIndex:
    """Pods of scheduler ``scheduler_name`` by PodGroup (see module docstring)."""

    def __init__(self, store: Store, scheduler_name: str, group_keys: tuple[str, ...]):
        self.store = store
        self.scheduler_name = scheduler_name
        self.group_keys = group_keys
        self.groups: dict[Key, Group] = {}
        self.pod_group: dict[Key, tuple[Key, str]] = {}  # pod -> (group, state)
        self.ungrouped: set[Key] = set()
        self.version = 0
        for pod in store.list("pods"):
            self._track("ADDED", pod)
        store.add_listener(self._on_change)

    def group_name(self, pod: dict) -> str | None:
        annotations = pod["metadata"].get("annotations") or {}
        return next((annotations[k] for k in self.group_keys if annotations.get(k)), None)

    def _on_change(self, change: Change) -> None:
        if change.resource == "pods":
            self._track(change.type, change.obj)

    def _track(self, type_: str, pod: dict) -> None:
        if pod.get("spec", {}).get("schedulerName") != self.scheduler_name:
            return
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        deleted = type_ == "DELETED"
        state = pod_state(pod, deleted)
        name = None if deleted else self.group_name(pod)
        old = self.pod_group.get(key)
        if name is None:
            if old is not None:
                self._leave(key, old)
            if state in ("pending", "gated") and not deleted:
                if key not in self.ungrouped:
                    self.ungrouped.add(key)
                    self.version += 1
            else:
                self.ungrouped.discard(key)
            return
        self.ungrouped.discard(key)
        gkey = (key[0], name)
        if old == (gkey, state):
            return
        if old is not None and old[0] == gkey:  # same group, new state: the Group object stays
            self.groups[gkey].members[old[1]].discard(key)
        elif old is not None:
            self._leave(key, old)
        group = self.groups.get(gkey)
        if group is None:
            group = self.groups[gkey] = Group(gkey)
        group.members[state].add(key)
        group.gpus[key] = gpu_request(pod)
        self.pod_group[key] = (gkey, state)
        self.version += 1

    def _leave(self, key: Key, old: tuple[Key, str]) -> None:
        gkey, state = old
        group = self.groups.get(gkey)
        if group is not None:
            group.members[state].discard(key)
            group.gpus.pop(key, None)
            if group.empty:
                del self.groups[gkey]
        del self.pod_group[key]
        self.version += 1

    def group(self, key: Key) -> Group:
        return self.groups.get(key) or Group(key)
