"""A gang scheduler's jobs as a session sees them (``Job``, ``Placement``), and what its status writers
(``volcano_status``, ``kai_status``) see of the scheduler (``GangView``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from gpupoc.sim.controllers.podgroups import Group
from gpupoc.sim.store import Store

Key = tuple[str, str]


@dataclass
class Job:
    """One PodGroup as a session sees it."""

    key: Key
    obj: dict
    group: Group
    queue: str
    min_member: int
    priority: int
    created: str
    preemptible: bool = True
    seq: int = 0  # creation order among PodGroups (creation times have whole seconds)

    @property
    def total(self) -> int:
        """Members that count for the gang (not failed)."""
        return self.group.count("pending", "gated", "active", "releasing", "succeeded")

    @property
    def ready_count(self) -> int:
        return self.group.count("active", "succeeded")

    @property
    def need(self) -> int:
        """Members still to place before the gang is whole."""
        return max(0, self.min_member - self.ready_count)

    @property
    def pending(self) -> list[Key]:
        return sorted(self.group.members["pending"])

    @property
    def allocated_gpus(self) -> int:
        """GPUs of the members bound and not terminating (what counts toward the queue's share)."""
        return self.group.gpus_of("active")

    def min_gpus(self) -> int:
        """GPUs the gang needs to become whole: its next ``need`` pending pods'."""
        gpus = self.group.gpus
        return sum(gpus.get(k, 0) for k in self.pending[: self.need])


@dataclass
class Placement:
    """A placement attempt: the pods reserved (key, pod, node), the first pod that fit nowhere, and
    whether the gang was bound."""

    placed: list[tuple[Key, dict, str]] = field(default_factory=list)
    failed: tuple[Key, dict] | None = None
    fit_error: str = ""  # why ``failed`` fit nowhere, with the gang's other pods reserved
    bound: bool = False
    untried: list[Key] = field(default_factory=list)


class GangView(Protocol):
    """What a status writer sees of its gang scheduler (``gang.GangScheduler``): the store, whether messages
    are opaque, and how it records events and pod conditions."""

    store: Store
    opaque: bool  # the reasons-opaque fault: messages stay empty

    def record(self, obj: dict, reason: str, message: str, type_: str, now: float, every: bool = False) -> None:
        """An event on a PodGroup or Queue, at most once per retry interval unless ``every``."""

    def show_pod(self, key: Key, reason: str, message: str, now: float) -> None:
        """PodScheduled=False with ``reason``/``message`` on a pending pod, and the scheduler's Warning event."""
