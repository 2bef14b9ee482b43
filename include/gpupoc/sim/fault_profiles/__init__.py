"""The fault profiles (``sim/faults.py`` ``Fault``), one module each, and the table that installs them.

A profile's module says what it changes and holds its ``install(state)``: it replaces or wraps the reactors it
changes (``sim/reactors.py``, the correct platform's decisions the controllers and the API server ask), or
registers on a port (a validating webhook in ``state.hooks``, a controller in ``reactors.addons``). ``bootstrap``
calls ``install`` once, before the store is filled and the controllers are built, for each planted profile.
Adding a fault: a ``Fault`` member, a module here, a line in ``PROFILES``, and a reactor if none fits yet.
"""

from __future__ import annotations

from typing import Callable

from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.fault_profiles import (
    admission_refused, audit_gaps, borrow_not_reclaimed, cross_tenant_logs, endpoints_stale, events_dropped,
    fairshare_ignored, gang_partial, gpumem_not_enforced, gpus_leak, logs_lost_on_failure, pod_lost,
    priority_ignored, quota_not_enforced, readiness_ignored, reasons_opaque, serving_preempted, slice_leak,
    vague_reasons, vgpu_overcommit)
from gpupoc.sim.faults import Fault

PROFILES: dict[Fault, Callable[[ClusterState], None]] = {
    Fault.CROSS_TENANT_LOGS: cross_tenant_logs.install,
    Fault.QUOTA_NOT_ENFORCED: quota_not_enforced.install,
    Fault.EVENTS_DROPPED: events_dropped.install,
    Fault.LOGS_LOST_ON_FAILURE: logs_lost_on_failure.install,
    Fault.PRIORITY_IGNORED: priority_ignored.install,
    Fault.GPUS_LEAK: gpus_leak.install,
    Fault.AUDIT_GAPS: audit_gaps.install,
    Fault.GANG_PARTIAL: gang_partial.install,
    Fault.BORROW_NOT_RECLAIMED: borrow_not_reclaimed.install,
    Fault.FAIRSHARE_IGNORED: fairshare_ignored.install,
    Fault.REASONS_OPAQUE: reasons_opaque.install,
    Fault.VAGUE_REASONS: vague_reasons.install,
    Fault.GPUMEM_NOT_ENFORCED: gpumem_not_enforced.install,
    Fault.VGPU_OVERCOMMIT: vgpu_overcommit.install,
    Fault.SLICE_LEAK: slice_leak.install,
    Fault.ENDPOINTS_STALE: endpoints_stale.install,
    Fault.READINESS_IGNORED: readiness_ignored.install,
    Fault.SERVING_PREEMPTED: serving_preempted.install,
    Fault.POD_LOST: pod_lost.install,
    Fault.ADMISSION_REFUSED: admission_refused.install,
}


def install(state: ClusterState) -> None:
    """Install each fault profile planted in ``state`` (in ``Fault`` order) on its reactors and ports."""
    for fault in Fault:
        if fault in state.faults:
            PROFILES[fault](state)
