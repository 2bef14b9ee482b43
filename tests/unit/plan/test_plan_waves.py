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


def gang_data(default_data):
    import copy

    data = copy.deepcopy(default_data)
    data["workloads"].append({**next(w for w in data["workloads"] if w["name"] == "v-train-1g"),
                              "name": "v-ddp-3x1g", "replicas": 3, "min_available": 2})
    wave = data["test_classes"]["queue_congestion"]["wave"]
    wave[:0] = [{"workload": "v-ddp-3x1g", "tenant": "team-vision", "count": 2}]
    next(e for e in wave if e["workload"] == "v-sweep-1g" and e["tenant"] == "team-vision")["count"] = 1  # room in its quota for the gangs
    return data


def test_a_multi_replica_workload_is_one_item_per_replica_sharing_its_gang(default_data):
    from gpupoc.plan import parse_plan

    plan = parse_plan(gang_data(default_data), "plan.yaml")
    items = class_items(plan, TestClass.QUEUE_CONGESTION)
    first, second = items[:3], items[3:6]
    assert [i.name for i in first] == ["qc-v-ddp-3x1g-000", "qc-v-ddp-3x1g-001", "qc-v-ddp-3x1g-002"]
    assert {i.gang for i in first} == {"qc-v-ddp-3x1g-g000"} and {i.gang for i in second} == {"qc-v-ddp-3x1g-g003"}
    assert [i.replica for i in first] == [0, 1, 2] and {(i.replicas, i.min_available) for i in first} == {(3, 2)}
    assert items[6].gang is None and items[6].min_available == 1
