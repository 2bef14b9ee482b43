"""The classes' services in the plan (``plan/service_checks.py``): each names a kind service workload and a
tenant allowed its priority, fits its tenant's quota beside the wave, and a node failure under a replica names a
service of its class with traffic and a replica to spare."""

from __future__ import annotations

import copy

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.plan import parse_plan

FR = "test_classes.fault_recovery"


def errors_of(data: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_plan(data, "plan.yaml")
    return info.value.errors


def test_the_default_plan_deploys_its_online_service_in_every_class(data):
    plan = parse_plan(copy.deepcopy(data), "plan.yaml")
    for cls, spec in plan.test_classes.items():
        assert [e.workload for e in spec.services] == ["svc-infer"], cls
    assert plan.workload("svc-infer").service.warmup_seconds > 0
    assert [f.service for f in plan.test_classes.fault_recovery.service_failures] == ["svc-infer"]


def test_a_service_entry_names_a_service_workload_and_a_tenant_allowed_its_priority(data):
    services = data["test_classes"]["utilization"]["services"]
    services.append({"workload": "v-train-1g", "tenant": "team-vision"})
    services.append({"workload": "svc-infer", "tenant": "team-vision"})
    services.append({"workload": "nope", "tenant": "team-x"})
    errs = errors_of(data)
    base = "test_classes.utilization.services"
    assert any(e.startswith(f"{base}[1].workload: 'v-train-1g' is kind training, not service") for e in errs), errs
    assert any(e.startswith(f"{base}[2].tenant: priority class 'gpupoc-critical' of 'svc-infer' is not allowed for "
                            "tenant 'team-vision'") for e in errs), errs
    assert any(e.startswith(f"{base}[2].workload: 'svc-infer' is listed twice") for e in errs), errs
    assert any(e.startswith(f"{base}[3].workload: unknown workload 'nope'") for e in errs), errs
    assert any(e.startswith(f"{base}[3].tenant: unknown tenant 'team-x'") for e in errs), errs


def test_a_service_failure_needs_its_service_deployed_with_traffic_and_a_spare_replica(data):
    fr = data["test_classes"]["fault_recovery"]
    fr["service_failures"].append({"service": "nope"})
    fr["services"][0].update(traffic=False, replicas=1)
    errs = errors_of(data)
    assert any(e.startswith(f"{FR}.service_failures[1].service: 'nope' is not among {FR}.services") for e in errs)
    assert any(e.startswith(f"{FR}.service_failures[0].service: 'svc-infer' gets no traffic") for e in errs)
    assert any(e.startswith(f"{FR}.service_failures[0].service: 'svc-infer' runs 1 replica") for e in errs)


def test_a_service_failure_fails_its_node_as_the_class_s_node_failure_does_unless_it_says_otherwise(data):
    data["platform"]["simulated"] = False  # a real cluster: the sim injector has no endpoint there
    for inj in data["test_classes"]["fault_recovery"]["injections"]:
        if inj["kind"] == "node_failure":
            inj["injector"] = "taint"
    plan = parse_plan(copy.deepcopy(data), "plan.yaml")
    fr = plan.test_classes.fault_recovery
    assert fr.service_injector(fr.service_failures[0]).method == "taint", "the platform's one way to fail a node"
    data["test_classes"]["fault_recovery"]["service_failures"][0]["injector"] = "sim"
    errs = errors_of(data)
    assert any(e.startswith(f"{FR}.service_failures[0].injector.method: 'sim' fails nodes through the simulated "
                            "cluster's own endpoint") for e in errs), errs


def test_serving_replicas_count_against_their_tenant_s_quota_beside_the_wave(data):
    t = next(t for t in data["tenants"] if t["name"] == "team-serving")
    t["quota"]["gpus"] = 12  # the congestion wave asks 11 of team-serving, its service 2 more
    errs = errors_of(data)
    assert ("test_classes.queue_congestion.wave: tenant 'team-serving' would hold 13 GPUs of pods (its services' "
            "replicas included) at once, above its quota of 12 (quota counts pending pods, so the platform refuses "
            "the excess at creation); lower the counts or raise the quota") in errs


def test_a_service_failure_leaves_its_replacement_time_to_be_seen_within_the_traffic(data):
    fr = data["test_classes"]["fault_recovery"]
    fr["services"][0]["traffic_seconds"] = 40  # the failure at 10 s, and up to 60 s for a replacement
    errs = errors_of(data)
    assert any(e.startswith(f"{FR}.service_failures[0].at_seconds: the failure 10 s into the service's 40 s of "
                            "traffic leaves less than the 60 s a replacement may take") for e in errs), errs
