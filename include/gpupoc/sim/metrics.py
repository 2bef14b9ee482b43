"""The simulated GPUs as NVIDIA dcgm-exporter exposes them.

``render_dcgm`` serves ``/metrics`` through the shared ``gpupoc.kube.dcgm`` (the real-cluster exporter's too):
one series per simulated GPU and field, ``container``/``namespace``/``pod`` for allocated GPUs as with
``--kubernetes``. In the ``hami`` mode a card held only through vGPU slices shows its first slice's pod, and
HAMi's series follow. ``kube_state`` serves ``/metrics/kube-state``.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import replace

from gpupoc.kube.dcgm import DCGM_FIELDS, XID_MESSAGES, GpuReading, dcgm_exposition
from gpupoc.kube.dcgm import read_gpu as read_card
from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.inventory import Gpu

__all__ = ["DCGM_FIELDS", "XID_MESSAGES", "integrate_energy", "read_gpu", "render_dcgm"]

# Store -> {GPU uuid: ((holder, container), GPU labels, pod labels)}
_GPU_LABEL_CACHE: "weakref.WeakKeyDictionary[object, dict]" = weakref.WeakKeyDictionary()


def read_gpu(state: ClusterState, gpu: Gpu) -> GpuReading:
    """The GPU's reading: its holder pod's telemetry (same util and memory on each of the pod's GPUs)."""
    return read_card(gpu, state.inventory.telemetry.get(gpu.holder) if gpu.holder is not None else None)


def integrate_energy(state: ClusterState, now: float | None = None) -> None:
    """Add each GPU's current power times the time since the last call to its energy counter (mJ)."""
    inv = state.inventory
    now = time.monotonic() if now is None else now
    last = inv.energy_sampled_at
    inv.energy_sampled_at = now
    if last is None or now <= last:
        return
    dt = now - last
    holders = _slice_holders(state)
    for gpus in inv.gpus.values():
        for g in gpus:
            if not g.replica:  # a time-slicing replica is the same card
                g.energy_mj += read_gpu(state, _as_shown(g, holders)).power_w * dt * 1000.0


def _slice_holders(state: ClusterState) -> dict:
    """HAMi mode: the pod shown on each card that vGPU slices share (``hami_metrics.slice_holders``)."""
    if state.mode != SchedulerMode.HAMI:
        return {}
    from gpupoc.sim.hami_metrics import slice_holders

    return slice_holders(state)


def _as_shown(gpu: Gpu, holders: dict) -> Gpu:
    """The card as the exporter shows it: a card held only through HAMi slices gets its first slice's pod."""
    if gpu.holder is not None or gpu.uuid not in holders:
        return gpu
    holder, container = holders[gpu.uuid]
    return replace(gpu, holder=holder, container=container)


def render_dcgm(state: ClusterState, now: float | None = None) -> str:
    """Every simulated GPU in dcgm-exporter's text format; also advances the energy counters."""
    integrate_energy(state, now)
    label_cache = _GPU_LABEL_CACHE.setdefault(state.store, {})
    holders = _slice_holders(state)
    cards = [_as_shown(card, holders) for node in sorted(state.inventory.gpus) for card in state.inventory.gpus[node]]
    text = dcgm_exposition(cards, state.inventory.telemetry, label_cache).render()
    if state.mode == SchedulerMode.HAMI:  # HAMi's scheduler and vGPU monitor, scraped alongside
        from gpupoc.sim.hami_metrics import render_hami

        return text + render_hami(state)
    return text
