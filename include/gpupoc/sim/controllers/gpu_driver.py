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


def _cards_by_uuid(state: ClusterState) -> dict:
    """Every card of the inventory by UUID, built again only when the inventory's cards change (a container
    start would otherwise walk every card of a 1,000-node cluster)."""
    gpus = state.inventory.gpus
    key = (id(gpus), tuple(id(cards) for cards in gpus.values()))  # a node added or its cards replaced
    cached = getattr(state, "_cards_by_uuid", None)
    if cached is None or cached[0] != key:
        cached = (key, {g.uuid: g for cards in gpus.values() for g in cards})
        state._cards_by_uuid = cached
    return cached[1]


def driver_env(state: ClusterState, visible: str) -> dict[str, str]:
    """The driver's env for a container that sees the cards ``visible`` (comma-separated UUIDs)."""
    uuids = [u for u in visible.split(",") if u]
    if not uuids:
        return {}
    by_uuid = _cards_by_uuid(state)
    directory = ledger_dir(state)
    directory.mkdir(parents=True, exist_ok=True)
    env = {LEDGER_ENV: str(directory)}
    for i, u in enumerate(uuids):
        if u in by_uuid:
            env[MEMORY_ENV.format(index=i)] = str(by_uuid[u].memory_mib)
    return env
