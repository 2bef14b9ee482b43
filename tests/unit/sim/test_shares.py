"""Fair shares between queues: water-filling, Volcano's deserved shares, KAI's fair shares."""

from __future__ import annotations

import pytest

from gpupoc.sim.controllers.shares import (INF, Claim, KaiQueueShare, VolcanoQueueShare, kai_fair_shares, saturation,
                                           volcano_deserved, water_fill)


def test_water_filling_gives_floors_then_divides_by_weight_up_to_each_cap():
    out = water_fill([Claim("a", 2, 100, 2), Claim("b", 2, 5, 1), Claim("c", 0, 100, 1)], 20)
    # floors 2 + 2; 16 left split 2:1:1 -> b stops at its cap of 5, the 1 it leaves goes 2:1 to a and c
    assert out == {"a": pytest.approx(2 + 8 + 2 / 3), "b": pytest.approx(5), "c": pytest.approx(4 + 1 / 3)}


def test_water_filling_serves_higher_priority_first():
    out = water_fill([Claim("hi", 0, 10, 1, priority=2), Claim("lo", 0, 10, 5, priority=1)], 12)
    assert out == {"hi": pytest.approx(10), "lo": pytest.approx(2)}


def test_floors_larger_than_the_pool_are_scaled_down():
    assert water_fill([Claim("a", 8, 8, 1), Claim("b", 8, 8, 1)], 8) == {"a": 4.0, "b": 4.0}


def test_volcano_deserved_is_guarantee_plus_weighted_rest_capped_by_request():
    queues = [VolcanoQueueShare("vision", 2, 24, 4, 24), VolcanoQueueShare("nlp", 1, 24, 4, 24),
              VolcanoQueueShare("serving", 1, 0, 8, 8)]
    out = volcano_deserved(queues, 32)
    assert out == {"vision": pytest.approx(4 + 32 / 3), "nlp": pytest.approx(4 + 16 / 3), "serving": 8}
    idle = volcano_deserved([VolcanoQueueShare("vision", 2, 24, 4, 24), VolcanoQueueShare("nlp", 1, 0, 4, 24),
                             VolcanoQueueShare("serving", 1, 0, 8, 8)], 32)
    assert idle["vision"] == pytest.approx(20), "an idle queue lends its weighted share"


def test_volcano_fixed_deserved_and_unweighted_shares():
    out = volcano_deserved([VolcanoQueueShare("a", 1, 30, deserved=10), VolcanoQueueShare("b", 1, 30, 2)], 32)
    assert out == {"a": 10.0, "b": pytest.approx(22)}
    assert volcano_deserved([VolcanoQueueShare("a", 5, 30, 3), VolcanoQueueShare("b", 1, 30, 2)], 32,
                            weighted=False) == {"a": 3.0, "b": 2.0}


def test_kai_fair_shares_give_quotas_then_over_quota_by_weight_level_by_level():
    queues = [KaiQueueShare("root", None, 32, 1, -1, 100),
              KaiQueueShare("vision", "root", 8, 2, 24, 100, request=24),
              KaiQueueShare("nlp", "root", 8, 1, 24, 100, request=24),
              KaiQueueShare("serving", "root", 8, 1, 8, 100, request=0)]
    out = kai_fair_shares(queues, 32)
    assert out["root"] == pytest.approx(32)
    assert (out["vision"], out["nlp"], out["serving"]) == (pytest.approx(8 + 32 / 3), pytest.approx(8 + 16 / 3), 0)
    quota_only = kai_fair_shares(queues, 32, weighted=False)
    assert (quota_only["vision"], quota_only["nlp"]) == (8, 8)


def test_kai_limits_and_unlimited_quotas():
    queues = [KaiQueueShare("a", None, -1, 1, 5, 100, request=20), KaiQueueShare("b", None, 0, 1, -1, 100, request=20)]
    out = kai_fair_shares(queues, 20)
    assert out == {"a": pytest.approx(5), "b": pytest.approx(15)}


def test_saturation_is_allocated_over_share():
    assert saturation(4, 8) == 0.5 and saturation(0, 0) == 0.0 and saturation(1, 0) == INF
