"""Cross-field checks: references resolve, GPUs fit a node, adapters are complete, waves fit quotas."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.plan import parse_plan


def errors_of(data: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_plan(data, "plan.yaml")
    return info.value.errors


def workload_index(data: dict, name: str) -> int:
    return next(i for i, w in enumerate(data["workloads"]) if w["name"] == name)


def test_unknown_pool_and_priority_class_of_a_workload(data):
    i = workload_index(data, "v-train-1g")
    data["workloads"][i]["pool"] = "nowhere"
    data["workloads"][i]["priority_class"] = "gpupoc-urgent"
    errs = errors_of(data)
    assert f"workloads[{i}].pool: unknown pool 'nowhere'; one of ['inference', 'training']" in errs
    assert any(e.startswith(f"workloads[{i}].priority_class: unknown priority class 'gpupoc-urgent'")
               for e in errs)


def test_gpus_must_fit_a_node_of_the_pool(data):
    i = workload_index(data, "v-infer-4g")
    data["workloads"][i]["gpus"] = 8
    errs = errors_of(data)
    assert (f"workloads[{i}].gpus: 8 GPUs do not fit a node of pool 'inference' (4 GPUs per node); "
            "lower gpus or choose another pool") in errs


def test_wave_references_must_resolve(data):
    wave = data["test_classes"]["queue_congestion"]["wave"]
    wave[0]["workload"] = "v-train-16g"
    wave[1]["tenant"] = "team-robotics"
    errs = errors_of(data)
    assert any(e.startswith("test_classes.queue_congestion.wave[0].workload: unknown workload 'v-train-16g'")
               for e in errs)
    assert any(e.startswith("test_classes.queue_congestion.wave[1].tenant: unknown tenant 'team-robotics'")
               for e in errs)


def test_wave_priority_class_must_be_allowed_for_the_tenant(data):
    data["test_classes"]["utilization"]["wave"][0]["priority_class"] = "gpupoc-critical"
    errs = errors_of(data)
    assert any(e.startswith("test_classes.utilization.wave[0].priority_class: priority class 'gpupoc-critical' "
                            "is not allowed for tenant 'team-vision'") for e in errs), errs


@pytest.mark.parametrize("adapter, what", [("kueue", "LocalQueue"), ("volcano", "Queue"), ("kai", "queue")])
def test_queue_adapters_need_a_queue_per_tenant(data, adapter, what):
    data["platform"]["adapter"] = adapter
    parse_plan(data)  # the default plan names a queue per tenant for every adapter
    del data["tenants"][1]["queues"][adapter]
    assert errors_of(data) == [f"tenants[1].queues.{adapter}: the {adapter} adapter needs a {what} for tenant "
                               f"'team-nlp'; add tenants[1].queues.{adapter}: <queue name>"]


def test_kube_scheduler_needs_no_queues(data):
    for t in data["tenants"]:
        t.pop("queues")
    assert parse_plan(data).platform.adapter.value == "kube-scheduler"


def test_kueue_priority_label_only_with_kueue(data):
    data["platform"]["options"]["kueue_priority_label"] = True
    assert any(e.startswith("platform.options.kueue_priority_label: only applies to the kueue adapter")
               for e in errors_of(data))


@pytest.mark.parametrize("adapter", ["volcano", "kai", "hami"])
def test_dra_gpus_only_with_a_scheduler_that_allocates_dra_devices(data, adapter):
    data["platform"]["options"]["gpus"] = "dra"
    data["platform"]["adapter"] = adapter
    assert any(e.startswith("platform.options.gpus: dra needs kube-scheduler's DRA allocator") and repr(adapter) in e
               for e in errors_of(data))


@pytest.mark.parametrize("adapter", ["kube-scheduler", "kueue"])
def test_dra_gpus_are_accepted_with_kube_scheduler_and_kueue(data, adapter):
    data["platform"]["options"]["gpus"] = "dra"
    data["platform"]["adapter"] = adapter
    assert parse_plan(data).platform.options.dra


def test_the_default_plans_kube_dra_platform_is_kube_scheduler_with_dra_gpus():
    from gpupoc.plan import load_plan
    from gpupoc.plan.loader import DEFAULT_PLAN

    plan = load_plan(f"{DEFAULT_PLAN}#kube-dra", kubeconfig_later=True)
    assert plan.platform.adapter.value == "kube-scheduler" and plan.platform.options.dra
    assert not load_plan(DEFAULT_PLAN, kubeconfig_later=True).platform.options.dra, "device plugin by default"


def test_duplicate_names_are_refused_at_the_repeated_field(data):
    data["tenants"][2]["name"] = "team-vision"
    data["workloads"][1]["name"] = data["workloads"][0]["name"]
    errs = errors_of(data)
    assert "tenants[2].name: duplicate name 'team-vision'; names must be unique" in errs
    assert "workloads[1].name: duplicate name 'v-train-1g'; names must be unique" in errs


def test_a_tenant_repeating_both_name_and_namespace_gets_one_line_for_each(data):
    data["tenants"].append(dict(data["tenants"][0]))
    errs = errors_of(data)
    assert errs == ["tenants[3].name: duplicate name 'team-vision'; names must be unique",
                    "tenants[3].namespace: duplicate namespace 'team-vision'; namespaces must be unique"]


def test_injections_named_after_the_same_kind_are_duplicates(data):
    inj = data["test_classes"]["fault_recovery"]["injections"]
    inj.append(dict(inj[2]))
    assert errors_of(data) == ["test_classes.fault_recovery.injections[5].name: duplicate name 'oom'; names must "
                               "be unique (an injection without a name is named after its kind)"]
    inj[5]["name"] = "oom-again"
    assert parse_plan(data).test_classes.fault_recovery.injections[5].name == "oom-again"


def test_wave_beyond_tenant_quota_is_refused_because_pending_pods_count(data):
    vision = next(t for t in data["tenants"] if t["name"] == "team-vision")
    vision["quota"]["gpus"] = 16
    data["test_classes"]["queue_congestion"]["wave"] = [
        {"workload": "v-train-8g", "tenant": "team-vision", "count": 3}]
    errs = errors_of(data)
    assert errs == ["test_classes.queue_congestion.wave: tenant 'team-vision' would hold 24 GPUs of pods at once, "
                    "above its quota of 16 (quota counts pending pods, so the platform refuses the excess at "
                    "creation); lower the counts or raise the quota"]


def test_over_quota_submissions_are_exempt_from_the_quota_check(data):
    over = data["test_classes"]["tenant_isolation"]["over_quota"]
    over[0]["count"] = 5
    assert parse_plan(data).test_classes.tenant_isolation.over_quota[0].count == 5


def test_injection_references_and_nodes_resolve(data):
    inj = data["test_classes"]["fault_recovery"]["injections"]
    inj[4]["node"] = "training-node-9"
    inj[4]["pool"] = "gpu"
    inj[0]["tenant"] = "nobody"
    errs = errors_of(data)
    base = "test_classes.fault_recovery.injections"
    assert any(e.startswith(f"{base}[4].node: unknown node 'training-node-9'") for e in errs), errs
    assert any(e.startswith(f"{base}[4].pool: unknown pool 'gpu'") for e in errs), errs
    assert any(e.startswith(f"{base}[0].tenant: unknown tenant 'nobody'") for e in errs), errs


def test_probe_pairs_cross_tenants(data):
    data["test_classes"]["tenant_isolation"]["probes"]["pairs"] = [{"actor": "team-nlp", "target": "team-nlp"}]
    assert errors_of(data) == ["test_classes.tenant_isolation.probes.pairs[0]: actor and target are both "
                               "'team-nlp'; a probe crosses tenants"]


def test_enabled_congestion_needs_a_wave_but_disabled_may_be_empty(data):
    data["test_classes"]["queue_congestion"]["wave"] = []
    assert errors_of(data) == ["test_classes.queue_congestion.wave: empty; list at least one "
                               "{workload, tenant, count}"]
    data["test_classes"]["queue_congestion"]["enabled"] = False
    assert parse_plan(data).test_classes.queue_congestion.wave == []


def test_workload_names_leave_room_for_the_pod_name_suffixes(data):
    long = "v-" + "x" * 50
    data["workloads"].append(dict(data["workloads"][0], name=long))
    i = len(data["workloads"]) - 1
    errs = errors_of(data)
    assert errs == [f"workloads[{i}].name: {long!r} is 52 characters; at most 47 so pod names stay within 63"]


def test_min_available_cannot_exceed_the_replicas(data):
    i = workload_index(data, "v-train-1g")
    data["workloads"][i].update(replicas=2, min_available=3)
    assert any(e.startswith(f"workloads[{i}]: min_available 3 is above replicas 2")
               for e in errors_of(data)), errors_of(data)


def test_a_gang_larger_than_its_pool_could_never_be_placed(data):
    i = workload_index(data, "v-train-8g")
    data["workloads"][i]["replicas"] = 4
    assert any(e.startswith(f"workloads[{i}].replicas: a gang of 4 pods of 8 GPUs needs 32 GPUs at once, above pool "
                            "'training''s 24") for e in errors_of(data))


def test_kueue_pod_groups_need_every_pod(data):
    i = workload_index(data, "v-train-1g")
    data["workloads"][i].update(replicas=4, min_available=2)
    data["platform"]["adapter"] = "kueue"
    assert any(e.startswith(f"workloads[{i}].min_available: Kueue admits a pod group only with all its pods")
               for e in errors_of(data))


def fair_share(data, **reclaim):
    iso = data["test_classes"]["tenant_isolation"]
    iso["fair_share"] = {"pool": "training", "tenants": [{"tenant": "team-vision", "weight": 2, "guaranteed_gpus": 8},
                                                         {"tenant": "team-nlp", "weight": 1, "guaranteed_gpus": 8}]}
    if reclaim:
        iso["reclaim"] = reclaim
    return iso


def test_the_fair_share_names_a_known_pool_and_tenants_once(data):
    iso = fair_share(data)
    iso["fair_share"]["pool"] = "nowhere"
    iso["fair_share"]["tenants"].append({"tenant": "team-nlp"})
    errs = errors_of(data)
    base = "test_classes.tenant_isolation.fair_share"
    assert f"{base}.pool: unknown pool 'nowhere'; one of ['inference', 'training']" in errs
    assert any(e.startswith(f"{base}.tenants[2].tenant: duplicate tenant 'team-nlp'") for e in errs), errs


def test_a_reclaim_needs_a_fair_share(data):
    data["test_classes"]["tenant_isolation"]["reclaim"] = {
        "borrower": {"tenant": "team-nlp", "workload": "xt-train-4g", "count": 6},
        "lender": {"tenant": "team-vision", "workload": "xt-train-4g", "count": 2}}
    assert any(e.startswith("test_classes.tenant_isolation.reclaim: needs test_classes.tenant_isolation.fair_share")
               for e in errors_of(data))


def test_a_lender_asking_beyond_its_fair_share_is_owed_no_reclaim(data):
    fair_share(data, borrower={"tenant": "team-nlp", "workload": "xt-train-4g", "count": 6},
               lender={"tenant": "team-vision", "workload": "xt-train-4g", "count": 4})
    assert any(e.startswith("test_classes.tenant_isolation.reclaim.lender.count: the lender asks 16 GPUs, above the "
                            "13.3333 it is owed") for e in errors_of(data)), errors_of(data)
