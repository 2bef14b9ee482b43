"""Each competing tenant's share of the pool while they competed, beside its fair share."""

import pytest

from gpupoc.classes.tenant_isolation.fair_share import Owed, share_rows

from tests.unit.pipeline.timelines import at, tl

OWED = [Owed("team-vision", 2, 8), Owed("team-nlp", 1, 8)]


def jobs(tenant, n, placed, gpus=4, ended=20):
    return [tl(f"{tenant}-{i}", tenant=tenant, gpus=gpus, ready=0, placed=placed[i] if i < len(placed) else None,
               ended=ended if i < len(placed) else None) for i in range(n)]


def test_an_even_split_against_a_two_to_one_fair_share_is_within_a_tolerance_of_six_percent():
    tls = jobs("team-vision", 4, [0, 0, 0]) + jobs("team-nlp", 4, [0, 0, 0])
    rows = {r.tenant: r for r in share_rows(tls, "training", 24, OWED, at(20))}
    assert rows["team-vision"].share == 0.5 and rows["team-vision"].fair_share == pytest.approx(0.5556, abs=1e-4)
    assert rows["team-vision"].share_error == pytest.approx(-0.0556, abs=1e-4)
    assert rows["team-nlp"].share_error == pytest.approx(0.0556, abs=1e-4)
    assert rows["team-vision"].contended_seconds == 20


def test_a_tenant_served_first_come_first_served_is_far_from_its_fair_share():
    tls = jobs("team-nlp", 4, [0, 0, 0, 0]) + jobs("team-vision", 4, [0, 0])
    rows = {r.tenant: r for r in share_rows(tls, "training", 24, OWED, at(20))}
    assert rows["team-vision"].share_error == pytest.approx(8 / 24 - (8 + 16 / 3) / 24, abs=1e-4)


def test_tenants_that_never_competed_have_no_share_error():
    tls = jobs("team-nlp", 2, [0, 0]) + jobs("team-vision", 2, [0, 0])
    assert {r.share_error for r in share_rows(tls, "training", 24, OWED, at(20))} == {None}


def test_gpus_held_by_others_in_the_pool_are_not_the_competitors_to_share():
    tls = jobs("team-vision", 4, [0, 0]) + jobs("team-nlp", 4, [0, 0]) + jobs("team-serving", 2, [0, 0])
    rows = {r.tenant: r for r in share_rows(tls, "training", 24, OWED, at(20))}
    assert rows["team-vision"].fair_gpus == pytest.approx(8)  # 16 available: the guarantees
