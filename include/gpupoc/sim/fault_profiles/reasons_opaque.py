"""``reasons-opaque``: every scheduler keeps only generic texts: pods "0/N nodes are available."
(kube-scheduler, Volcano and KAI alike), Kueue's gate, empty messages in Workload, PodGroup and queue
conditions, no PodGroup/Workload reason events, and no Kueue visibility API (``api/visibility.py``)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

def install(state: ClusterState) -> None:
    state.reactors.reasons_shown = False
