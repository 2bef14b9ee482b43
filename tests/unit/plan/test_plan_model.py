"""The plan model: structural errors are listed one per line with their path, the default plan is valid."""

from __future__ import annotations

import json

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.plan import DEFAULT_PLAN, Adapter, TestClass, canonical_json, load_plan, parse_plan, plan_hash


def errors_of(data: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_plan(data, "plan.yaml")
    return info.value.errors


def test_default_plan_loads_with_every_test_class_enabled():
    plan = load_plan(DEFAULT_PLAN)
    assert plan.platform.adapter is Adapter.KUBE_SCHEDULER
    assert [t.name for t in plan.tenants] == ["team-vision", "team-nlp", "team-serving"]
    assert {p.name: p.capacity_gpus for p in plan.pools} == {"training": 24, "inference": 8}
    assert all(spec.enabled for _, spec in plan.test_classes.items())
    assert plan.kubeconfig_path == (DEFAULT_PLAN.parent.parent / "var" / "sim" / "kubeconfig").resolve()


def test_default_plan_has_every_workload_kind_and_the_missing_image():
    plan = load_plan(DEFAULT_PLAN)
    kinds = {w.kind.value for w in plan.workloads}
    assert kinds == {"training", "inference", "failing", "idle", "cross-team", "service"}
    assert any(w.image == "registry.invalid/team-nlp/does-not-exist:1.0" for w in plan.workloads)
    images = {w.image for w in plan.workloads}
    assert {"gpupoc/workload:1.0", "gpupoc/virtual:1.0"} <= images


def test_negative_quota_names_path_expectation_and_value(data):
    data["tenants"][1]["quota"]["gpus"] = -4
    assert "tenants[1].quota.gpus: expected a positive integer, got -4" in errors_of(data)


def test_every_structural_error_is_listed_not_only_the_first(data):
    data["tenants"][0]["quota"]["gpus"] = 0
    data["pools"][1]["gpus_per_node"] = "four"
    data["workloads"][0]["memory_limit"] = "lots"
    data["test_classes"]["queue_congestion"]["thresholds"]["explanation_coverage"] = 1.5
    errs = errors_of(data)
    assert "tenants[0].quota.gpus: expected a positive integer, got 0" in errs
    assert "pools[1].gpus_per_node: expected a positive integer, got 'four'" in errs
    assert any(e.startswith("workloads[0].memory_limit: expected a Kubernetes quantity") for e in errs)
    assert any(e.startswith("test_classes.queue_congestion.thresholds.explanation_coverage: expected a ratio")
               for e in errs)
    assert len(errs) == 4, errs


def test_unknown_keys_are_errors(data):
    data["tenants"][0]["quotas"] = {"gpus": 1}
    data["platform"]["schedular"] = "kueue"
    errs = errors_of(data)
    assert any(e.startswith("tenants[0].quotas: Extra inputs are not permitted") for e in errs)
    assert any(e.startswith("platform.schedular: Extra inputs are not permitted") for e in errs)


def test_unknown_adapter_is_refused(data):
    data["platform"]["adapter"] = "slurm"
    errs = errors_of(data)
    assert len(errs) == 1 and errs[0].startswith("platform.adapter: Input should be 'kube-scheduler'"), errs


def test_window_end_must_follow_start(data):
    data["window"]["end"] = "2026-11-01T00:00:00+00:00"
    errs = errors_of(data)
    assert errs == ["window: end 2026-11-01T00:00:00+00:00 must be after start 2026-11-30T00:00:00+00:00"]


@pytest.mark.parametrize("schedule, ok", [("@daily", True), ("0 2 * * *", True), ("*/15 9-18 * * 1-5", True),
                                          ("daily", False), ("0 25 * * *", False)])
def test_window_schedule_is_cron_or_preset(data, schedule, ok):
    data["window"]["schedule"] = schedule
    if ok:
        assert parse_plan(data).window.schedule == schedule
    else:
        assert any(e.startswith("window.schedule: expected a") for e in errors_of(data))


def test_window_timezone_must_exist(data):
    data["window"]["timezone"] = "Mars/Olympus"
    assert any(e.startswith("window.timezone: expected an IANA time zone") for e in errors_of(data))


def test_platform_needs_exactly_one_way_in(data):
    data["platform"]["in_cluster"] = True
    errs = errors_of(data)
    assert any("set exactly one of kubeconfig, kubernetes_conn_id or in_cluster" in e for e in errs), errs


def test_memory_limit_below_request_is_refused(data):
    data["workloads"][0]["memory_request"] = "2Gi"
    data["workloads"][0]["memory_limit"] = "512Mi"
    errs = errors_of(data)
    assert any(e.startswith("workloads[0]: memory_limit 512Mi is below memory_request 2Gi") for e in errs), errs


def test_injection_kind_selects_its_fields(data):
    data["test_classes"]["fault_recovery"]["injections"].append({"kind": "hang", "workload": "hang",
                                                                  "tenant": "team-nlp"})
    errs = errors_of(data)
    assert any(".injections[5].hang.timeout_seconds: Field required" in e for e in errs), errs


def test_hash_is_stable_across_yaml_layout_and_changes_with_content(data, tmp_path):
    a = parse_plan(data)
    reordered = dict(reversed(list(data.items())))
    assert plan_hash(parse_plan(reordered)) == plan_hash(a)
    data["test_classes"]["queue_congestion"]["thresholds"]["max_wait_seconds"] = 181
    assert plan_hash(parse_plan(data)) != plan_hash(a)
    assert json.loads(canonical_json(a))["name"] == "gpupoc-sim-default"


def test_relative_paths_resolve_against_the_plan_file(data, tmp_path):
    import yaml

    (tmp_path / "plans").mkdir()
    f = tmp_path / "plans" / "p.yaml"
    f.write_text(yaml.safe_dump(data))
    plan = load_plan(f)
    assert plan.kubeconfig_path == tmp_path / "var" / "sim" / "kubeconfig"
    assert plan.evidence_root_path == tmp_path / "var" / "evidence"
    assert plan.resolved_sources() == {"audit_log_path": str(tmp_path / "var" / "sim" / "audit.log")}


def test_missing_file_and_bad_yaml_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="POC plan not found"):
        load_plan(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("tenants: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_plan(bad)


def test_test_class_dag_ids():
    assert [tc.dag_id for tc in TestClass] == ["poc_queue_congestion", "poc_tenant_isolation", "poc_utilization",
                                               "poc_fault_recovery", "poc_audit_trail"]
