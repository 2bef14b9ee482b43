"""Typed rows of the shared-GPU probes: GPU-memory isolation (two tenants on one physical card, one allocating past
its slice), vGPU slices (two tenants' slices that do not fit on one card together) and each slice's utilization."""

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


@dataclass
class VgpuSliceRow:
    """One vGPU-slices probe: two tenants' slices of one card that do not fit together. ``overcommitted``: the
    scheduler granted a card more memory than it has (the second slice placed while the first was held, or any
    card's grants over its memory); ``slice_released``: the second pod got the card within
    ``max_slice_release_seconds`` of the first pod's end. Both empty where the probe could not tell (``reason``);
    ``memory_slices`` is false where no node slices its cards' memory (the case did not arise)."""

    sharing: str                                 # hami | time-slicing | mps | mig | none (the nodes' device plugins)
    memory_slices: bool                          # some node gives pods slices of a card's memory (HAMi)
    node: str | None = None
    gpu_uuid: str | None = None                  # the card both slices were asked of
    card_mib: int | None = None                  # its memory as its device plugin registered it
    first_tenant: str | None = None
    first_pod: str | None = None
    first_mib: int | None = None                 # the slice it asked for (nvidia.com/gpumem)
    first_phase: str | None = None               # when the scheduler answered the second pod
    second_tenant: str | None = None
    second_pod: str | None = None
    second_mib: int | None = None
    second_placed_at_once: bool | None = None    # placed while the first held its slice
    second_waiting_message: str | None = None    # the scheduler's reason while it waited
    card_allocated_mib: int | None = None        # the card's grants when the scheduler answered the second pod
    cards_checked: int | None = None             # registered cards whose grants were added up then
    cards_overcommitted: str | None = None       # "<uuid> on <node>: <granted> of <card> MiB (<pods>)"
    overcommitted: bool | None = None
    first_finished_at: datetime | None = None
    second_placed_at: datetime | None = None
    slice_release_seconds: float | None = None   # from the first pod's end to the second's placement
    max_slice_release_seconds: float | None = None
    slice_released: bool | None = None           # within max_slice_release_seconds
    finding: str | None = None
    observed_at: datetime | None = None
    reason: str | None = None                    # why the probe could not decide


@dataclass
class VgpuUtilizationRow:
    """One vGPU slice in one time bucket: what the scheduler granted it (memory, cores) against what it used, and
    its GPU-hours counted as the fraction of the card it holds (``share``: the larger of its memory share and its
    core share, as HAMi reserves both on the card)."""

    bucket: datetime
    namespace: str
    pod: str
    container_index: str
    gpu_uuid: str
    node: str | None
    tenant: str | None
    task_type: str | None
    card_mib: float | None
    mem_allocated_mib: float | None
    mem_used_mib_avg: float | None
    mem_used_mib_max: float | None
    cores_allocated: float | None               # percent of the card's SMs (0: no limit asked)
    util_avg: float | None                      # the container's SM utilization of the card (%)
    share: float | None                         # fraction of the card the slice holds
    samples: int
    allocated_gpu_hours: float                  # share x hours held
    used_gpu_hours: float                       # utilization x hours held


SHARING_TABLES: dict[str, type] = {"memory_isolation": MemoryIsolationRow, "vgpu_slices": VgpuSliceRow,
                                   "vgpu_utilization": VgpuUtilizationRow}
