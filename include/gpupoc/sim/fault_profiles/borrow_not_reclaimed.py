"""``borrow-not-reclaimed``: no preemption across queues: Kueue never reclaims within a cohort
(``controllers/kueue_admit.py``), Volcano never runs reclaim and KAI never reclaims (``controllers/gang.py``
``reclaims``); preemption inside a queue is unchanged."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

def install(state: ClusterState) -> None:
    state.reactors.reclaim_across_queues = False
