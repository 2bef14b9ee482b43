"""``priority-ignored``: kube-scheduler's queue is plain FIFO by creation time and it preempts nothing
(``controllers/scheduler.py`` queue order, ``controllers/preemption.py`` ``_preempt``)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

def install(state: ClusterState) -> None:
    state.reactors.priority_queue = False
