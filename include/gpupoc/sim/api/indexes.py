"""Secondary indexes that keep hot list queries cheap on big clusters (events by involved object)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.store import Change


class EventIndex:
    """Event names by (namespace, involvedObject.name), maintained from store changes."""

    def __init__(self, state: ClusterState):
        self._by_obj: dict[tuple[str, str], set[str]] = {}
        self._store = state.store
        for ev in state.store.list("events"):
            self._add(ev)
        state.store.add_listener(self._on_change)

    def _key(self, ev: dict) -> tuple[tuple[str, str], str]:
        meta = ev.get("metadata") or {}
        return (meta.get("namespace", ""), (ev.get("involvedObject") or {}).get("name", "")), meta.get("name", "")

    def _add(self, ev: dict) -> None:
        key, name = self._key(ev)
        self._by_obj.setdefault(key, set()).add(name)

    def _on_change(self, change: Change) -> None:
        if change.resource != "events":
            return
        key, name = self._key(change.obj)
        if change.type == "DELETED":
            names = self._by_obj.get(key)
            if names is not None:
                names.discard(name)
                if not names:
                    del self._by_obj[key]
        else:
            self._by_obj.setdefault(key, set()).add(name)

    def events_about(self, namespace: str | None, name: str) -> list[dict]:
        """Stored events about objects called ``name`` (in ``namespace`` or any), sorted like a list."""
        out = []
        for (ns, obj_name), names in self._by_obj.items() if namespace is None else \
                [((namespace, name), self._by_obj.get((namespace, name), set()))]:
            if obj_name != name:
                continue
            for n in names:
                ev = self._store.get("events", ns, n)
                if ev is not None:
                    out.append(ev)
        out.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        return out


def event_index(state: ClusterState) -> EventIndex:
    """The state's event index, created (with a full scan) when ``build_controllers`` has not made it."""
    if state.event_index is None:
        state.event_index = EventIndex(state)
    return state.event_index
