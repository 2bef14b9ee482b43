"""``fairshare-ignored``: the queue order ignores shares and weights, first come first served by
creation time: Kueue's fair-sharing order and preemption (``controllers/kueue_admit.py``), Volcano's
weight-derived deserved share and KAI's over-quota division (``controllers/gang.py`` ``weighted``)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

def install(state: ClusterState) -> None:
    state.reactors.fair_shares = False
