"""Wave expansion: every pod of a class, with stable unique names that fit a pod name with the suffix."""

from __future__ import annotations

from gpupoc.plan import DEFAULT_PLAN, TestClass, class_items, load_plan


def test_congestion_wave_expands_counts_in_order_with_priority_overrides():
    plan = load_plan(DEFAULT_PLAN)
    items = class_items(plan, TestClass.QUEUE_CONGESTION)
    expected = sum(e.count for e in plan.test_classes.queue_congestion.wave)
    assert len(items) == expected
    assert [i.index for i in items] == list(range(expected))
    assert items[0].name == "qc-v-train-8g-000" and items[0].priority_class == "gpupoc-high"
    infer = [i.priority_class for i in items if i.workload == "v-infer-1g"]
    assert infer[-1] == "gpupoc-critical" and set(infer[:-1]) == {"gpupoc-normal"}  # the last entry overrides
    assert {i.role for i in items} == {"wave"}


def test_congestion_wave_exceeds_capacity_with_every_gpu_count():
    plan = load_plan(DEFAULT_PLAN)
    items = class_items(plan, "queue_congestion")
    gpus = [plan.workload(i.workload).gpus for i in items]
    assert sum(gpus) > sum(p.capacity_gpus for p in plan.pools)
    assert {1, 2, 4, 8} <= set(gpus)
    assert len({i.priority_class for i in items}) >= 3
    durations = [plan.workload(i.workload).duration_seconds for i in items]
    assert 10 <= min(durations) and max(durations) <= 40


def test_names_are_unique_and_leave_room_for_the_operator_suffix():
    plan = load_plan(DEFAULT_PLAN)
    for tc in TestClass:
        items = class_items(plan, tc)
        names = [i.name for i in items]
        assert len(set(names)) == len(names), tc
        assert all(len(n) + 9 <= 63 for n in names), tc


def test_fault_recovery_items_are_the_injections_with_their_scenarios():
    plan = load_plan(DEFAULT_PLAN)
    items = class_items(plan, TestClass.FAULT_RECOVERY)
    assert [(i.role, i.scenario) for i in items] == [
        ("injection:nonzero_exit", "nonzero-exit"), ("injection:missing_image", "missing-image"),
        ("injection:oom", "oom"), ("injection:hang", "hang"), ("injection:node_failure", "node-failure")]


def test_isolation_and_audit_extra_items():
    plan = load_plan(DEFAULT_PLAN)
    iso = class_items(plan, TestClass.TENANT_ISOLATION)
    assert [i.tenant for i in iso if i.role == "over_quota"] == ["team-nlp"]
    audit = class_items(plan, TestClass.AUDIT_TRAIL)
    assert [i.role for i in audit][-2:] == ["artifact-producer", "artifact-consumer"]
    assert audit[-1].to_dict()["workload"] == "eval-artifact"
