"""Record core/v1 Events the way Kubernetes components do, with series de-duplication."""

from __future__ import annotations

import time

from gpupoc.sim import clock
from gpupoc.sim.store import Store

WARNING = "Warning"
NORMAL = "Normal"
# the ``action`` of the events kube-scheduler writes through events.k8s.io/v1 (schedule_one.go, preemption.go)
ACTIONS = {("default-scheduler", "FailedScheduling"): "Scheduling", ("default-scheduler", "Scheduled"): "Binding",
           ("default-scheduler", "Preempted"): "Preempting"}


class EventRecorder:
    """Creates Events; the same (object, reason, message) again raises ``count`` instead."""

    def __init__(self, store: Store, drop_warnings: bool = False):
        self.store = store
        self.drop_warnings = drop_warnings  # set by the ``events-dropped`` profile (``fault_profiles``)
        self._series: dict[tuple[str, str, str], tuple[str, str]] = {}
        self._recorded_at: dict[tuple[str, str, str], float] = {}
        self._last_ns = 0

    def repeat(self, obj: dict, reason: str, message: str, type_: str, component: str,
               every_s: float) -> dict | None:
        """``record``, unless the same (object, reason, message) was recorded less than ``every_s`` ago: a
        controller that says the same thing on each retry, its repeats aggregated into ``count`` and
        ``lastTimestamp`` at most that often."""
        key = (obj["metadata"]["uid"], reason, message)
        now = time.monotonic()
        if now - self._recorded_at.get(key, -every_s) < every_s:
            return None
        self._recorded_at[key] = now
        return self.record(obj, reason, message, type_, component)

    def record(
        self,
        obj: dict,
        reason: str,
        message: str,
        type_: str = NORMAL,
        component: str = "kubelet",
        host: str | None = None,
        field_path: str | None = None,
    ) -> dict | None:
        """Record an event about ``obj`` (a stored object); returns the Event or None when dropped."""
        if type_ == WARNING and self.drop_warnings:
            return None
        meta = obj["metadata"]
        namespace = meta.get("namespace") or "default"
        series_key = (meta["uid"], reason, message)
        now_s = clock.rfc3339()
        existing = self._series.get(series_key)
        if existing:
            ev = self.store.get("events", existing[0], existing[1])
            if ev is not None:
                ev["count"] = ev.get("count", 1) + 1
                ev["lastTimestamp"] = now_s
                return self.store.update("events", ev)
        # as Kubernetes names events: "<object>.<hex unix nanoseconds>", so name order is time order
        self._last_ns = max(time.time_ns(), self._last_ns + 1)
        name = f"{meta['name']}.{self._last_ns:x}"
        involved = {
            "kind": obj.get("kind"),
            "namespace": meta.get("namespace"),
            "name": meta["name"],
            "uid": meta["uid"],
            "apiVersion": obj.get("apiVersion"),
            "resourceVersion": meta.get("resourceVersion"),
        }
        if field_path:
            involved["fieldPath"] = field_path
        if involved["namespace"] is None:
            involved.pop("namespace")
        ev = {
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": type_,
            "source": {"component": component, **({"host": host} if host else {})},
            "firstTimestamp": now_s,
            "lastTimestamp": now_s,
            "count": 1,
            "eventTime": None,
            "reportingComponent": component,
            "reportingInstance": host or "",
        }
        action = ACTIONS.get((component, reason))
        if action:
            ev["action"] = action
        self.store.create("events", ev)
        self._series[series_key] = (namespace, name)
        return ev
