"""What each competing tenant is owed: guarantees first, then the rest by weight, never above what it asks."""

import pytest

from gpupoc.common.fair_share import Owed, fair_allocation

TWO = [Owed("vision", 2, 8), Owed("nlp", 1, 8)]


def test_guarantees_then_the_rest_by_weight_when_both_want_more():
    owed = fair_allocation(24, {"vision": 40, "nlp": 40}, TWO)
    assert owed["vision"] == pytest.approx(8 + 8 * 2 / 3) and owed["nlp"] == pytest.approx(8 + 8 / 3)


def test_a_tenant_asking_less_leaves_the_rest_to_the_other():
    owed = fair_allocation(24, {"vision": 4, "nlp": 40}, TWO)
    assert owed == pytest.approx({"vision": 4, "nlp": 20})


def test_nobody_is_owed_more_than_it_asks_and_idle_capacity_stays_unowed():
    assert fair_allocation(24, {"vision": 6, "nlp": 5}, TWO) == pytest.approx({"vision": 6, "nlp": 5})


def test_guarantees_above_the_capacity_are_scaled_down():
    owed = fair_allocation(8, {"vision": 40, "nlp": 40}, TWO)
    assert owed == pytest.approx({"vision": 4, "nlp": 4})
