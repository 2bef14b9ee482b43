"""The queue objects each mode starts with, shaped as each project's API returns them, and tenant access."""

from __future__ import annotations

from .gang_helpers import mode_state


def test_kueue_cluster_queues_carry_cohort_limits_preemption_and_weight(tmp_path):
    state = mode_state(tmp_path, "kueue")
    spec = state.store.get("clusterqueues", None, "team-vision-training")["spec"]
    assert spec["cohort"] == "training" and spec["fairSharing"] == {"weight": "2"}
    assert spec["resourceGroups"][0]["flavors"][0] == {"name": "training", "resources": [
        {"name": "nvidia.com/gpu", "nominalQuota": "8", "borrowingLimit": "16"}]}
    assert spec["preemption"] == {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any",
                                  "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 1000}}
    shared = state.store.get("clusterqueues", None, "training-shared")["spec"]
    assert shared["resourceGroups"][0]["flavors"][0]["resources"][0]["lendingLimit"] == "8"
    assert shared["preemption"]["reclaimWithinCohort"] == "Never"


def test_volcano_queues_and_the_default_queue(tmp_path):
    state = mode_state(tmp_path, "volcano")
    assert state.store.get("queues", None, "default")["spec"] == {"weight": 1, "reclaimable": True}
    vision = state.store.get("queues", None, "team-vision")
    assert vision["spec"] == {"weight": 2, "reclaimable": True, "capability": {"nvidia.com/gpu": "24"},
                              "guarantee": {"resource": {"nvidia.com/gpu": "4"}}}
    assert vision["status"]["state"] == "Open"


def test_kai_queues_have_gpu_quota_weight_limit_and_a_parent(tmp_path):
    state = mode_state(tmp_path, "kai")
    vision = state.store.get("queues", None, "team-vision")
    assert vision["spec"]["parentQueue"] == "gpupoc" and vision["spec"]["priority"] == 100
    assert vision["spec"]["resources"]["gpu"] == {"quota": 8, "overQuotaWeight": 2, "limit": 24}
    assert vision["spec"]["resources"]["cpu"] == {"quota": -1, "overQuotaWeight": 1, "limit": -1}
    assert state.store.get("queues", None, "gpupoc")["status"]["childQueues"] == ["team-nlp", "team-serving",
                                                                                   "team-vision"]


def test_tenants_may_manage_podgroups_and_read_queues(tmp_path):
    state = mode_state(tmp_path, "volcano")
    rules = state.store.get("roles", "team-nlp", "gpupoc-tenant")["rules"]
    assert {"apiGroups": ["scheduling.volcano.sh"], "resources": ["podgroups"],
            "verbs": ["get", "list", "watch", "create", "delete", "patch", "update"]} in rules
    binding = state.store.get("clusterrolebindings", None, "gpupoc-tenant-queues")
    assert {"kind": "ServiceAccount", "name": "runner", "namespace": "team-nlp"} in binding["subjects"]
