"""``slice-leak``: HAMi keeps counting a finished pod's vGPU slice (``controllers/hami.py``
``HamiScheduler.usage``), so ``hami_vgpu_memory_allocated_bytes`` keeps it too (``hami_metrics.py``)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

def install(state: ClusterState) -> None:
    state.reactors.holds_slice = lambda pod: True  # bound and allocated: ended or not
