"""A declared queue becomes the object each project's API returns: unset limits are absent, numbers are whole
where they can be, KAI's unlimited is -1, and status starts empty."""

from __future__ import annotations

from gpupoc.kube.queue_objects import cluster_queue, kai_queue, volcano_queue
from gpupoc.kube.queues import ClusterQueue, KaiQueue, VolcanoQueue


def test_a_cluster_queue_without_limits_names_only_its_nominal_quota():
    built = cluster_queue(ClusterQueue(name="a", flavor="pool", nominal_gpus=4, fair_sharing_weight=2.0))
    spec = built["spec"]
    assert spec["resourceGroups"] == [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
        {"name": "pool", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "4"}]}]}]
    assert "cohort" not in spec and spec["fairSharing"] == {"weight": "2"}
    assert spec["preemption"]["borrowWithinCohort"] == {"policy": "Never"}
    assert built["status"]["admittedWorkloads"] == 0


def test_a_volcano_queue_leaves_out_what_is_unset():
    assert volcano_queue(VolcanoQueue(name="q"))["spec"] == {"weight": 1, "reclaimable": True}
    spec = volcano_queue(VolcanoQueue(name="q", capability_gpus=8, guarantee_gpus=2, priority=5))["spec"]
    assert spec["capability"] == {"nvidia.com/gpu": "8"} and spec["guarantee"] == {"resource": {"nvidia.com/gpu": "2"}}
    assert spec["priority"] == 5 and "deserved" not in spec


def test_a_kai_queue_keeps_fractions_and_lists_its_children():
    built = kai_queue(KaiQueue(name="top", quota_gpus=2.5, over_quota_weight=1.0), ["b", "a"])
    gpu = built["spec"]["resources"]["gpu"]
    assert gpu == {"quota": 2.5, "overQuotaWeight": 1, "limit": -1}
    assert built["spec"]["resources"]["cpu"] == {"quota": -1, "overQuotaWeight": 1, "limit": -1}
    assert built["status"]["childQueues"] == ["a", "b"] and "parentQueue" not in built["spec"]
