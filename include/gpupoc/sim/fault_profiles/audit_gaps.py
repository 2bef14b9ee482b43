"""``audit-gaps``: changes of a ResourceQuota (update, patch) leave no audit record (``sim/audit.py``
``level_for``)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

def install(state: ClusterState) -> None:
    state.audit.audit_gaps = True
