"""The simulated NVIDIA driver as a container sees it: where the cards' memory ledger lives and how much
framebuffer each visible card has (``GPUPOC_GPU_LEDGER_DIR``, ``GPUPOC_GPU_MEMORY_MIB_<i>``).

Every process on a card books its device memory in one ledger file per card UUID (``workload.cuda``), so two
containers sharing a card see each other's use as processes on one real card do. Whether a container may book
past its share is HAMi-core's business (``CUDA_DEVICE_MEMORY_LIMIT_<i>``), not the driver's.
"""

from __future__ import annotations

from gpupoc.sim.cluster import ClusterState

LEDGER_ENV = "GPUPOC_GPU_LEDGER_DIR"
MEMORY_ENV = "GPUPOC_GPU_MEMORY_MIB_{index}"


def ledger_dir(state: ClusterState):
    return state.data_dir / "gpus"


def driver_env(state: ClusterState, visible: str) -> dict[str, str]:
    """The driver's env for a container that sees the cards ``visible`` (comma-separated UUIDs)."""
    uuids = [u for u in visible.split(",") if u]
    if not uuids:
        return {}
    directory = ledger_dir(state)
    directory.mkdir(parents=True, exist_ok=True)
    env = {LEDGER_ENV: str(directory)}
    for i, u in enumerate(uuids):
        card = state.inventory.card(u)
        if card is not None:
            env[MEMORY_ENV.format(index=i)] = str(card.memory_mib)
    return env
