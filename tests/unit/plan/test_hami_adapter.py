"""The hami adapter: no queues, pods named for hami-scheduler, the simulated cluster's hami mode."""

from __future__ import annotations

from pathlib import Path

from gpupoc.demo.services import sim_mode_for
from gpupoc.plan import load_plan
from gpupoc.plan.model import Adapter

PLANS = Path(__file__).resolve().parents[3] / "plans"


def test_the_hami_plan_loads_without_queues_and_runs_on_the_hami_mode():
    plan = load_plan(PLANS / "hami.yaml")
    assert plan.platform.adapter is Adapter.HAMI and plan.platform.scheduler_name == "hami-scheduler"
    assert sim_mode_for(PLANS / "hami.yaml") == "hami"


def test_a_vgpu_workload_asks_hamis_slice_resources_in_its_limits():
    from gpupoc.podspec.build import resources

    plan = load_plan(PLANS / "hami.yaml")
    w = plan.workload("v-util-infer-1g")
    res = resources(w)
    assert res.limits == {"memory": "512Mi", "nvidia.com/gpu": "1", "nvidia.com/gpumem": "12000",
                          "nvidia.com/gpucores": "40"}
    assert res.requests["nvidia.com/gpu"] == "1" and "nvidia.com/gpumem" not in res.requests
    assert "nvidia.com/gpumem" not in resources(plan.workload("v-infer-1g")).limits  # a whole card


def test_a_vgpu_slice_is_refused_outside_hami_and_with_both_memory_forms():
    import pytest
    import yaml

    from gpupoc.exceptions import ConfigError
    from gpupoc.plan import parse_plan

    data = yaml.safe_load((PLANS / "hami.yaml").read_text())
    data["platform"]["adapter"] = "kube-scheduler"
    with pytest.raises(ConfigError) as info:
        parse_plan(data, "plan.yaml")
    assert any(e.startswith("workloads[") and ".vgpu: a slice of each GPU is HAMi's" in e for e in info.value.errors)
    data = yaml.safe_load((PLANS / "hami.yaml").read_text())
    next(w for w in data["workloads"] if w["name"] == "v-util-infer-1g")["vgpu"]["memory_percentage"] = 25
    with pytest.raises(ConfigError) as info:
        parse_plan(data, "plan.yaml")
    assert any("set memory_mib or memory_percentage, not both" in e for e in info.value.errors)
