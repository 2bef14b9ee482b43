"""Every state change of the wave's pods as the observer's watches received it (``watch_cache``).

Each pod's transitions (``PodTransitions``) are kept with the moment each state arrived, as clusterloader2's
PodStartupLatency stamps them, and with the ``Scheduled`` event's ``eventTime`` (microseconds) from the
events watch, as kube-burner reads it. A relist after 410 Gone marks the pods still waiting then: a word the
platform said meanwhile may have gone unseen.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable

from gpupoc.common.timefmt import parse_time
from gpupoc.pipeline.pod_transitions import PodTransitions
from gpupoc.pipeline.wave import TERMINAL, item_key
from gpupoc.pipeline.watch_cache import OnChange

RELISTED = "RELISTED"  # the change a collection hands on after a relist (no object)


@dataclass
class WatchedPods:
    """The wave's pods (those with a wave item) by (namespace, name), fed by the watches' changes."""

    pods: dict[tuple[str, str], PodTransitions] = field(default_factory=dict)
    _scheduled_events: dict[tuple[str, str], datetime] = field(default_factory=dict)
    _ended: dict[str, datetime] = field(default_factory=dict)  # item -> when a pod of it last ended or went
    _last: dict[tuple[str, str], dict] = field(default_factory=dict)  # the last object each pod's watch sent
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def from_dicts(cls, rows: list[dict]) -> "WatchedPods":
        """Go on from what an earlier try of the observer kept (its first receipts stay)."""
        return cls({(t.namespace, t.name): t for t in map(PodTransitions.from_dict, rows)})

    def handler(self, path: str) -> OnChange | None:
        """The change handler of a watched collection: pods and events; nothing else is kept here."""
        resource = path.rstrip("/").rsplit("/", 1)[-1]
        return {"pods": self._pod, "events": self._event}.get(resource)

    def last_objects(self) -> list[dict]:
        """The last object the watches received of each wave pod, a pod that went between two looks included."""
        with self._lock:
            return [self._last[k] for k in sorted(self._last)]

    def all_ended_since(self, items: Iterable[str], since: datetime) -> bool:
        """Whether a pod of each of ``items`` ended (or was deleted) after ``since``, as the watch received it;
        told at the first that has not (a rest between looks asks it ten times a second)."""
        ended = self._ended
        return all((at := ended.get(item)) is not None and at >= since for item in items)

    def _pod(self, kind: str, pod: dict, received: datetime) -> None:
        if kind == RELISTED:
            with self._lock:
                for t in self.pods.values():
                    t.relisted_waiting = t.relisted_waiting or "PodScheduled" not in t.first_true
            return
        meta = pod.get("metadata") or {}
        key, item = (meta.get("namespace") or "", meta.get("name") or ""), item_key(pod)
        if not item:
            return
        if kind == "DELETED" or (pod.get("status") or {}).get("phase") in TERMINAL:
            self._ended[item] = received
        with self._lock:
            self._last[key] = pod
            t = self.pods.setdefault(key, PodTransitions(key[0], key[1], item))
            t.observe(pod, received)
            t.scheduled_event_at = t.scheduled_event_at or self._scheduled_events.get(key)

    def _event(self, kind: str, event: dict, received: datetime) -> None:
        involved = event.get("involvedObject") or event.get("regarding") or {}
        if kind == RELISTED or event.get("reason") != "Scheduled" or involved.get("kind") != "Pod":
            return
        at = parse_time(event.get("eventTime") or event.get("firstTimestamp"))
        key = (involved.get("namespace") or (event.get("metadata") or {}).get("namespace") or "",
               involved.get("name") or "")
        if at is None:
            return
        with self._lock:
            self._scheduled_events.setdefault(key, at)
            if key in self.pods:
                self.pods[key].scheduled_event_at = self.pods[key].scheduled_event_at or at

    def to_dicts(self) -> list[dict]:
        with self._lock:
            return [self.pods[k].to_dict() for k in sorted(self.pods)]
