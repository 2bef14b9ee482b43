"""The simulated driver's env: each visible card's framebuffer, from the inventory as it is now (its card index
is kept between container starts, and built again when a node's cards change)."""

from __future__ import annotations

import dataclasses

import yaml

from gpupoc.sim.config import DEFAULT_CONFIG, ClusterConfig
from gpupoc.sim.controllers.gpu_driver import LEDGER_ENV, driver_env
from gpupoc.sim.server import make_state


def test_the_env_names_each_visible_cards_memory_and_follows_a_node_whose_cards_changed(tmp_path):
    config = ClusterConfig.model_validate(yaml.safe_load(DEFAULT_CONFIG.read_text()))
    state = make_state(config, tmp_path)
    node, cards = next(iter(state.inventory.gpus.items()))
    env = driver_env(state, f"{cards[0].uuid},{cards[1].uuid}")
    assert env[LEDGER_ENV] and env["GPUPOC_GPU_MEMORY_MIB_0"] == str(cards[0].memory_mib)
    assert env["GPUPOC_GPU_MEMORY_MIB_1"] == str(cards[1].memory_mib)
    smaller = [dataclasses.replace(c, memory_mib=c.memory_mib // 2) for c in cards]
    state.inventory.add_node(node, smaller)
    assert driver_env(state, cards[0].uuid)["GPUPOC_GPU_MEMORY_MIB_0"] == str(cards[0].memory_mib // 2)
    assert driver_env(state, "") == {} and "GPUPOC_GPU_MEMORY_MIB_0" not in driver_env(state, "GPU-unknown")
