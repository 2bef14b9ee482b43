"""``gpumem-not-enforced``: HAMi's device plugin injects no ``CUDA_DEVICE_MEMORY_LIMIT_<i>``, so a
vGPU's over-allocation succeeds and the card's neighbour runs out (``controllers/hami.py``
``HamiDevicePlugin.allocate``)."""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.reactors import Reactors

LIMIT = "CUDA_DEVICE_MEMORY_LIMIT_"

def install(state: ClusterState) -> None:
    reactors: Reactors = state.reactors
    inject = reactors.device_env
    reactors.device_env = lambda env: {k: v for k, v in inject(env).items() if not k.startswith(LIMIT)}
