"""HAMi's node registration, read in both of its formats."""

from __future__ import annotations

import json

from gpupoc.kube.hami import NODE_REGISTER, registered_cards

CARD, OTHER = "GPU-aaaa", "GPU-bbbb"


def node(register: str) -> dict:
    return {"metadata": {"name": "n", "annotations": {NODE_REGISTER: register}}}


def test_registered_cards_are_read_from_the_json_list_and_the_older_colon_list():
    listed = json.dumps([{"id": CARD, "index": 0, "count": 10, "devmem": 46068, "devcore": 100},
                         {"id": OTHER, "index": 1, "count": 10, "devmem": 46068, "devcore": 100}])
    legacy = f"{CARD},10,46068,100,NVIDIA-NVIDIA L40S,0,true:{OTHER},10,46068,100,NVIDIA-NVIDIA L40S,0,true:"
    assert registered_cards(node(listed)) == {CARD: 46068, OTHER: 46068} == registered_cards(node(legacy))


def test_a_node_without_a_registration_or_with_an_unreadable_memory_has_no_or_zero_cards():
    assert registered_cards({"metadata": {"name": "plain"}}) == {}
    assert registered_cards(node(f"{CARD},10,lots,100:")) == {CARD: 0}
