"""Typed rows of the GPU-memory isolation probe: two tenants on one physical card, one allocating past its slice."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass
class MemoryIsolationRow:
    """One memory-isolation probe: who failed, the OOM line, and the neighbour's memory and utilization before and
    after the aggressor's over-allocation. ``shared_gpu`` is false where no node shares its cards (the case did
    not arise); ``isolated`` is empty where the probe could not tell (no common card, a pod never started)."""

    sharing: str                                # hami | time-slicing | mps | mig | none (the nodes' device plugins)
    shared_gpu: bool                            # the cluster shares cards between pods: the probe applies
    node: str | None = None
    gpu_uuid: str | None = None                 # the physical card both tenants' pods saw
    same_card: bool | None = None               # every probe pod saw gpu_uuid
    card_mib: int | None = None
    slice_mib: int | None = None                # each tenant's slice (HAMi: nvidia.com/gpumem; else card / replicas)
    neighbour_tenant: str | None = None
    neighbour_pod: str | None = None
    neighbour_asked_mib: int | None = None
    neighbour_phase_before: str | None = None
    neighbour_phase_after: str | None = None
    neighbour_mib_before: float | None = None
    neighbour_mib_after: float | None = None
    neighbour_util_before: float | None = None  # percent; empty without a metrics source
    neighbour_util_after: float | None = None
    late_pod: str | None = None                 # the neighbour tenant's allocation after the aggressor's
    late_asked_mib: int | None = None
    late_phase: str | None = None
    late_mib: float | None = None
    late_oom: bool | None = None                # the neighbour's allocation within its slice was refused
    aggressor_tenant: str | None = None
    aggressor_pod: str | None = None
    aggressor_asked_mib: int | None = None
    aggressor_peak_mib: float | None = None     # the most the aggressor held (its own reports)
    aggressor_phase: str | None = None
    aggressor_exit_code: int | None = None
    aggressor_failed: bool | None = None
    aggressor_held_to_slice: bool | None = None  # it never held more than its slice
    oom_line: str | None = None                 # HAMi-core's "Device 0 OOM <used> / <limit>" line, or CUDA's error
    neighbour_unaffected: bool | None = None
    isolated: bool | None = None                # the aggressor alone failed, at its slice; the neighbour unaffected
    finding: str | None = None
    severity: str | None = None                 # P1 when isolation failed
    memory_source: str | None = None
    utilization_source: str | None = None
    observed_at: datetime | None = None
    reason: str | None = None                   # why the probe could not decide


SHARING_TABLES: dict[str, type] = {"memory_isolation": MemoryIsolationRow}
