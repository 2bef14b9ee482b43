"""``logs-lost-on-failure``: a container that exits non-zero loses its log (the kubelet calls
``reactors.container_exited`` as a container ends, ``controllers/kubelet_lifecycle.py``)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

def install(state: ClusterState) -> None:
    state.reactors.container_exited = lose_failed_log


def lose_failed_log(exit_code: int, log) -> None:
    if exit_code != 0:
        log.clear()
