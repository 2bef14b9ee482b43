"""Kueue's quota arithmetic: nominal, cohort pool, borrowing and lending limits, dominant resource share."""

from __future__ import annotations

from gpupoc.sim.controllers.kueue_quota import INF, QueueQuota, QuotaTree, weighted_share


def tree(*queues: QueueQuota) -> QuotaTree:
    return QuotaTree({q.name: q for q in queues})


def test_a_queue_without_cohort_has_its_nominal_quota_only():
    q = QueueQuota("a", "f", 8, usage=3)
    t = tree(q, QueueQuota("b", "f", 8))
    assert (t.available(q), t.potential_available(q), t.borrowing(q, 10)) == (5, 8, False)


def test_a_cohort_member_borrows_the_others_unused_quota():
    a, b = QueueQuota("a", "f", 8, "c"), QueueQuota("b", "f", 8, "c", usage=2)
    t = tree(a, b)
    assert t.available(a) == 14 and t.potential_available(a) == 16
    a.usage = 10
    assert t.borrowing(a) and t.borrowed(a) == 2 and t.available(b) == 4


def test_the_borrowing_limit_caps_what_a_queue_takes_from_the_cohort():
    a = QueueQuota("a", "f", 8, "c", borrowing_limit=4)
    t = tree(a, QueueQuota("b", "f", 8, "c"), QueueQuota("s", "f", 8, "c"))
    assert t.available(a) == 12 and t.potential_available(a) == 12


def test_a_lending_limit_keeps_the_rest_of_the_nominal_quota_for_the_owner():
    owner = QueueQuota("o", "f", 8, "c", lending_limit=2)  # 6 guaranteed, 2 lent
    other = QueueQuota("x", "f", 8, "c")
    t = tree(owner, other)
    assert t.available(other) == 10 and t.pool(other) == 10
    other.usage = 10
    assert t.available(owner) == 6, "the guaranteed part stays free for its owner"


def test_only_queues_of_the_same_flavor_share_a_pool():
    a, b = QueueQuota("a", "training", 8, "c"), QueueQuota("b", "inference", 8, "c")
    assert tree(a, b).available(a) == 8


def test_the_dominant_resource_share_is_borrowed_over_the_pool_and_weight():
    a = QueueQuota("a", "f", 8, "c", weight=2, usage=14)
    t = tree(a, QueueQuota("b", "f", 8, "c"), QueueQuota("s", "f", 8, "c"))
    assert t.share(a) == 6 * 1000 / 24 / 2
    assert t.share(a, extra=-6) == 0.0
    assert t.share(QueueQuota("z", "f", 8, "c", weight=0, usage=9)) == INF
    assert weighted_share(t.share(a)) == 125 and weighted_share(INF) == 2**63 - 1
