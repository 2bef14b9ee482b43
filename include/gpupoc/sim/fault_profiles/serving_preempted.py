"""``serving-preempted``: kube-scheduler's preemption takes a serving replica (a pod a ReplicaSet
controls) as a victim of any preemptor, whatever its priority (``controllers/preemption.py``)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

def install(state: ClusterState) -> None:
    state.reactors.victim_whatever_priority = serves


def serves(pod: dict) -> bool:
    """A serving replica: a pod its ReplicaSet controls."""
    return any(r.get("kind") == "ReplicaSet" and r.get("controller") for r in pod["metadata"].get("ownerReferences")
               or [])
