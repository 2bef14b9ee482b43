"""What a run of a plan costs the cluster, from the plan alone."""

import pytest

from gpupoc.plan import load_plan
from gpupoc.plan.cost import class_cost, cost_lines, plan_cost, scheduled_runs
from gpupoc.plan.classes import TestClass
from gpupoc.plan.loader import DEFAULT_PLAN
from gpupoc.plan.overrides import item_workload
from gpupoc.plan.waves import class_items


@pytest.fixture(scope="module")
def plan():
    return load_plan(DEFAULT_PLAN)


def test_gpu_hours_are_every_pods_gpus_times_its_duration(plan):
    items = class_items(plan, TestClass.QUEUE_CONGESTION)
    expected = sum(item_workload(plan, i).gpus * item_workload(plan, i).duration_seconds for i in items) / 3600
    cost = class_cost(plan, TestClass.QUEUE_CONGESTION)
    assert cost.gpu_hours == pytest.approx(expected) and cost.pods == len(items)


def test_the_congestion_wave_asks_for_twice_the_training_pool_at_once(plan):
    share = class_cost(plan, TestClass.QUEUE_CONGESTION).peak_share
    # inference: 11 GPUs of the wave and the online service's 2 replicas, of 8
    assert share["training"] == pytest.approx(48 / 24) and share["inference"] == pytest.approx(13 / 8)


def test_a_class_lasts_at_least_what_its_pools_need_and_at_most_its_deadlines(plan):
    c = class_cost(plan, TestClass.QUEUE_CONGESTION)
    training_gpu_seconds = sum(item_workload(plan, i).gpus * item_workload(plan, i).duration_seconds
                               for i in class_items(plan, TestClass.QUEUE_CONGESTION)
                               if item_workload(plan, i).pool == "training")
    assert c.shortest_seconds == pytest.approx(max(40, training_gpu_seconds / 24))
    assert c.longest_seconds > c.shortest_seconds


def test_classes_of_one_gpu_group_add_up_and_the_window_multiplies(plan):
    cost = plan_cost(plan)
    assert scheduled_runs(plan) == 7 and cost.runs == 7  # @daily over seven days
    assert cost.daily_seconds("shortest") == pytest.approx(sum(c.shortest_seconds for c in cost.classes))
    assert cost.to_dict()["window"]["gpu_hours"] == pytest.approx(round(cost.daily_gpu_hours * 7, 2))
    assert cost_lines(plan)[-1].startswith("  window: 7 run(s) on @daily")
