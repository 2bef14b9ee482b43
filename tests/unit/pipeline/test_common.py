"""Shared helpers: plan location, pool names."""

from __future__ import annotations


import pytest

from gpupoc.pipeline import common


def test_the_plan_comes_from_the_trigger_parameter_then_the_environment_then_the_default(monkeypatch, tmp_path):
    monkeypatch.delenv(common.PLAN_ENV, raising=False)
    assert common.plan_path(None) == common.repo_root() / "plans" / "default.yaml"
    monkeypatch.setenv(common.PLAN_ENV, str(tmp_path / "env.yaml"))
    assert common.plan_path(None) == tmp_path / "env.yaml"
    assert common.plan_path(str(tmp_path / "form.yaml")) == tmp_path / "form.yaml"
    assert common.plan_path("plans/small.yaml") == common.repo_root() / "plans" / "small.yaml"


@pytest.mark.parametrize("group,pool", [("gpus", "gpupoc_cluster"), ("", "gpupoc_cluster"),
                                        ("inference-only", "gpupoc_cluster_inference_only")])
def test_each_gpu_group_has_its_own_one_slot_pool(group, pool):
    assert common.cluster_pool(group) == pool


def test_wave_task_is_a_small_dict_of_four_keys():
    t = common.WaveTask("qc-train-000", "qc-train-000", "team-a", "team-a")
    assert t.to_dict() == {"workload_key": "qc-train-000", "name": "qc-train-000", "namespace": "team-a",
                           "cluster_context": "team-a"}
