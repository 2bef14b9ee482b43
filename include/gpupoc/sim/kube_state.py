"""The simulated cluster's objects as kube-state-metrics exposes them (``/metrics/kube-state``), rendered by the
shared ``gpupoc.kube.kube_state`` that the real-cluster exporter uses too."""

from __future__ import annotations

import weakref

from gpupoc.kube.kube_state import PodCache, render_kube_state as render_objects
from gpupoc.sim.cluster import ClusterState

# Store -> the pods rendered at its last scrape (unchanged pods are not re-rendered).
_POD_CACHE: "weakref.WeakKeyDictionary[object, PodCache]" = weakref.WeakKeyDictionary()


def render_kube_state(state: ClusterState) -> str:
    """Pods, nodes and resource quotas of the simulated cluster as kube-state-metrics series."""
    cache = _POD_CACHE.setdefault(state.store, {})
    return render_objects(state.store.list("pods"), state.store.list("nodes"), state.store.list("resourcequotas"),
                          cache)
