"""``gpus-leak``: the GPUs of a pod that failed on its own are never given back: the kubelet's release
(``controllers/kubelet.py``), a lost node's pods (``controllers/nodes.py``) and a failed pod's deletion
(``api/pods.py``) keep them held (idle on the dashboards)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

def install(state: ClusterState) -> None:
    state.reactors.keeps_gpus = failed_keeps_gpus


def failed_keeps_gpus(phase: str | None, deleting: bool) -> bool:
    """A pod that failed (and is not being deleted by a request) keeps its GPUs."""
    return phase == "Failed" and not deleting
