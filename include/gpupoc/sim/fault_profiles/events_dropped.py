"""``events-dropped``: no Warning event is recorded (the event recorder drops them, ``sim/events.py``)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

def install(state: ClusterState) -> None:
    state.events.drop_warnings = True
