"""Allocation as OpenCost computes it. Source of the rules and figures: the OpenCost Specification,
https://www.opencost.io/docs/specification ("Workload Costs": max(request, usage); "Idle Costs": cluster idle
cost = asset costs - workload costs, idle % = idle cost / resource allocation costs; "Shared Costs": uniformly or
proportionate to consumption; "Cluster Asset Costs": Total Cost = Amount x Duration x HourlyRate, with the
spec's own example attributes 2 CPU cores, 24 hours, $0.2 per hour; "Appendix A": a $35 node with base GPU $30,
CPU $30, RAM $10 normalizes to $15, $15, $5). These are every figure the specification gives: its Appendix C
("Working examples") says they are still to come."""

from __future__ import annotations

import pytest

from gpupoc.costing.allocation import (
    PoolCapacity,
    UsageRow,
    allocate,
    charged_hours,
    idle_percent,
    normalize_to_asset,
    spread_shared,
)
from gpupoc.costing.prices import Prices, SharedRule

H100, L40S = "NVIDIA H100 80GB HBM3", "NVIDIA L40S"


def plan_prices(rule: str = "proportional", **models: float) -> Prices:
    gpu = {name: {"per_hour": v, "source": "test"} for name, v in (models or {H100: 2.0}).items()}
    return Prices.model_validate({"currency": "EUR", "gpu_hour": gpu, "shared": {"rule": rule}})


def row(team, pod, req, used, pool="training", model=H100, shared=False, bucket="b0", task="training") -> UsageRow:
    return UsageRow(team, pod, pool, model, bucket, req, used, task, shared)


def test_appendix_a_normalizes_base_prices_to_the_node_price_keeping_their_ratio():
    out = normalize_to_asset(35.0, {"gpu": 30.0, "cpu": 30.0, "ram": 10.0})
    assert out == pytest.approx({"gpu": 15.0, "cpu": 15.0, "ram": 5.0})
    assert out["gpu"] / out["ram"] == pytest.approx(3.0)  # "remain 3x the price of a GB of RAM"


def test_normalizing_without_a_positive_base_price_names_the_argument():
    with pytest.raises(ValueError, match="base_prices"):
        normalize_to_asset(35.0, {"gpu": 0.0})


def test_a_workload_is_charged_the_larger_of_what_it_requested_and_what_it_used():
    assert charged_hours(2.0, 0.5) == 2.0   # requested, mostly idle: the request is charged
    assert charged_hours(1.0, 1.5) == 1.5   # used beyond its request: the use is charged


def test_workload_plus_idle_cost_equals_the_pools_asset_cost():
    # one 2-GPU pool for 2 hours at 2.0/GPU-hour: asset cost 8.0; a pod holds 1 GPU for 2 h, using half of it
    a = allocate([row("team-a", "p1", 2.0, 1.0)], [PoolCapacity("training", H100, 4.0)], plan_prices())
    assert a.workload_cost == pytest.approx(4.0)
    assert a.idle_cost == pytest.approx(4.0)               # cluster idle = asset - workload
    assert a.total_cost == pytest.approx(8.0)
    assert idle_percent(a.idle_cost, a.total_cost) == pytest.approx(0.5)
    assert a.waste_cost == pytest.approx(2.0)              # requested and unused: the workload's idle


def test_a_vgpu_slice_is_charged_by_its_share_of_the_card():
    # a quarter of a card for 2 hours is 0.5 GPU-hour
    a = allocate([row("team-a", "s1", 0.25 * 2, 0.1)], [PoolCapacity("training", H100, 2.0)], plan_prices())
    assert a.pods[0].gpu_cost == pytest.approx(1.0)
    assert a.idle_cost == pytest.approx(3.0)


def test_each_model_is_charged_its_own_price():
    p = plan_prices(**{H100: 2.0, L40S: 0.5})
    a = allocate([row("a", "p1", 1.0, 1.0), row("b", "p2", 1.0, 1.0, "inference", L40S)], [], p)
    assert sorted(x.gpu_cost for x in a.pods) == [0.5, 2.0]


def test_a_model_without_a_price_is_named_and_its_rows_are_not_priced():
    a = allocate([row("a", "p1", 1.0, 1.0), row("b", "p2", 1.0, 1.0, "inference", L40S)],
                 [PoolCapacity("inference", L40S, 8.0)], plan_prices())
    assert not a.verified and a.unpriced == [L40S]
    assert [x.row.pod for x in a.pods] == ["p1"] and a.idle == []


def test_shared_costs_spread_uniformly_across_the_other_tenants():
    assert spread_shared(9.0, {"a": 1.0, "b": 5.0, "c": 0.0}, SharedRule.EVEN) == pytest.approx(
        {"a": 3.0, "b": 3.0, "c": 3.0})


def test_shared_costs_spread_in_proportion_to_each_tenants_cost():
    assert spread_shared(100.0, {"a": 25.0, "b": 75.0}, SharedRule.PROPORTIONAL) == pytest.approx(
        {"a": 25.0, "b": 75.0})


def test_proportional_sharing_with_no_own_cost_falls_back_to_uniform():
    assert spread_shared(4.0, {"a": 0.0, "b": 0.0}, SharedRule.PROPORTIONAL) == {"a": 2.0, "b": 2.0}


def test_the_serving_pools_cost_goes_to_the_teams_not_to_itself():
    rows = [row("a", "p1", 1.0, 1.0), row("b", "p2", 3.0, 3.0), row("svc", "r1", 2.0, 1.0, shared=True)]
    a = allocate(rows, [], plan_prices("proportional"))
    assert a.shared_by_team == pytest.approx({"a": 1.0, "b": 3.0})  # 4.0 shared, 1:3
    even = allocate(rows, [], plan_prices("even"))
    assert even.shared_by_team == pytest.approx({"a": 2.0, "b": 2.0})


def test_the_specifications_allocation_cost_is_amount_times_duration_times_hourly_rate():
    # "Cluster Asset Costs": Amount 2 (CPU cores), Duration 24 hours, HourlyRate $0.2 -> Total Cost = 2 x 24 x 0.2
    p = Prices.model_validate({"currency": "USD", "gpu_hour": {H100: {"per_hour": 0.2, "source": "spec"}}})
    a = allocate([], [PoolCapacity("training", H100, 2 * 24.0)], p)
    assert a.total_cost == pytest.approx(9.6) and a.idle_cost == pytest.approx(9.6)  # nothing held: all idle


def test_idle_is_kept_per_bucket_each_offering_its_share_of_the_window():
    from gpupoc.costing.allocation import Bucket

    rows = [row("a", "p1", 2.0, 1.0, bucket="h0"), row("a", "p1", 1.0, 1.0, bucket="h1")]
    half = [Bucket("h0", 1.0), Bucket("h1", 0.5)]  # the window's last bucket is cut short by its end
    a = allocate(rows, [PoolCapacity("training", H100, 3.0)], plan_prices(), half)  # 2 GPUs x 1.5 h
    assert {(i.bucket, i.gpu_hours) for i in a.idle} == {("h0", 0.0), ("h1", 0.0)}
    b = allocate(rows[:1], [PoolCapacity("training", H100, 3.0)], plan_prices(), half)
    assert {(i.bucket, i.gpu_hours) for i in b.idle} == {("h0", 0.0), ("h1", 1.0)}  # a bucket no pod held
    assert b.total_cost == pytest.approx(3.0 * 2.0)  # still every GPU-hour of the pool, priced
