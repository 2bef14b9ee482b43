"""``quota-not-enforced``: the API server runs without its ResourceQuota admission plug-in, so every
pod is let through whatever its namespace's quota says (``sim/admission.py`` ``check_quota``)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

def install(state: ClusterState) -> None:
    state.reactors.disabled_admission.add("ResourceQuota")
