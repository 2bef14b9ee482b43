"""``endpoints-stale``: a pod that ended, was deleted, is terminating or went not ready (a lost node's)
stays in its Services' slices as it last was, still ready (``controllers/endpointslices.py``
``EndpointSliceController.sync`` asks ``reactors.slice_endpoints``)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

def install(state: ClusterState) -> None:
    state.reactors.slice_endpoints = keep_gone_endpoints


def keep_gone_endpoints(existing: dict | None, endpoints: list[dict],
                        ports: list[dict]) -> tuple[list[dict], list[dict]]:
    """The slice's endpoints whose pod is gone, terminating or no longer ready stay as they were."""
    if not existing:
        return endpoints, ports
    fresh = {e["targetRef"]["name"]: e for e in endpoints}
    for e in existing.get("endpoints") or []:
        name = e["targetRef"]["name"]
        was_ready = (e.get("conditions") or {}).get("ready")
        if name not in fresh or fresh[name]["conditions"]["terminating"] or (
                was_ready and not fresh[name]["conditions"].get("ready")):
            fresh[name] = e
    return list(fresh.values()), ports or existing.get("ports") or []
