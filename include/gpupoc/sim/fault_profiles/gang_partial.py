"""``gang-partial``: Volcano and KAI bind the pods of a PodGroup that fit even when fewer than
``minMember`` do (``controllers/gang.py``); Kueue composes no pod groups, so each pod of a group gets its own
Workload and is admitted alone (``controllers/kueue_groups.py``)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

def install(state: ClusterState) -> None:
    state.reactors.whole_gangs = False
