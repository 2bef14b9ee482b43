"""``readiness-ignored``: every running pod is a ready endpoint of its Services whatever its
readiness probe says (``controllers/endpointslices.py`` ``endpoint_of``)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.reactors import Reactors

def install(state: ClusterState) -> None:
    reactors: Reactors = state.reactors
    ready = reactors.endpoint_ready
    reactors.endpoint_ready = lambda pod: ready(pod) or (pod.get("status") or {}).get("phase") == "Running"
