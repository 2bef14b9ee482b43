"""``vgpu-overcommit``: HAMi's scheduler skips the card-memory check, so more gpumem is placed on a
card than it has (``controllers/hami.py`` ``HamiScheduler._place``, ``hami_devices.fit_node``)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

def install(state: ClusterState) -> None:
    state.reactors.card_memory_checked = False
