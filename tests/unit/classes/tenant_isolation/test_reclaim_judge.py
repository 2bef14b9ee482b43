"""A reclaim is owed when the borrower holds more than its guarantee and the free GPUs cannot hold the lender."""

from gpupoc.classes.tenant_isolation.reclaim_judge import fits_free, held_by_node, reclaim_row

from tests.unit.pipeline.timelines import at


def row(placed, free=None, held=24.0, observed=30.0):
    return reclaim_row(borrower="team-nlp", lender="team-vision", pool="training", borrower_guaranteed=8,
                       borrower_held=held, lender_asks=[4, 4], free=free or {"n1": 0, "n2": 0, "n3": 0},
                       submitted_at=at(0), placed=placed, taken=2, observed_seconds=observed,
                       max_reclaim_seconds=20)


def test_pods_fit_free_gpus_per_node_not_in_total():
    assert fits_free([4, 4], {"n1": 4, "n2": 4}) and not fits_free([4], {"n1": 2, "n2": 2})


def bound(node, gpus, phase):
    return {"spec": {"nodeName": node, "containers": [{"resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]},
            "status": {"phase": phase}}


def test_gpus_held_per_node_count_bound_pods_that_have_not_ended():
    pods = [bound("n1", 4, "Running"), bound("n1", 2, "Succeeded"), bound("n2", 1, "Pending"), bound(None, 8, "Pending")]
    assert held_by_node(pods) == {"n1": 4, "n2": 1}


def test_the_lender_placed_within_the_threshold_is_a_reclaim():
    r = row([at(3), at(5)])
    assert r.needs_reclaim and r.reclaimed is True and r.reclaim_seconds == 5 and r.borrowed_gpus == 16


def test_a_lender_never_placed_fails_with_the_time_watched():
    r = row([at(3), None])
    assert r.reclaimed is False and r.placed_at is None and r.reclaim_seconds == 30


def test_no_reclaim_is_owed_when_the_free_gpus_hold_the_lender_or_nothing_was_borrowed():
    assert row([at(1), at(1)], free={"n1": 8}).reclaimed is None
    assert row([at(1), at(1)], held=8).needs_reclaim is False
