"""Scheduler modes in the simulated cluster: what each serves in discovery, what its store's queues and podgroups are."""

from __future__ import annotations

import pytest

from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.sim.api.discovery import resource_list
from gpupoc.sim.api.registry import group_versions, lookup

from .gang_helpers import mode_state


@pytest.mark.parametrize("mode, served, absent", [
    (SchedulerMode.KUBE, {"kueue.x-k8s.io", "visibility.kueue.x-k8s.io"}, {"scheduling.volcano.sh", "scheduling.run.ai"}),
    (SchedulerMode.KUEUE, {"kueue.x-k8s.io", "visibility.kueue.x-k8s.io"}, {"scheduling.volcano.sh"}),
    (SchedulerMode.VOLCANO, {"scheduling.volcano.sh"}, {"kueue.x-k8s.io", "scheduling.run.ai"}),
    (SchedulerMode.KAI, {"scheduling.run.ai"}, {"kueue.x-k8s.io", "scheduling.volcano.sh"}),
])
def test_each_mode_serves_its_scheduler_groups_only(mode, served, absent):
    groups = group_versions(mode)
    assert served <= set(groups) and not absent & set(groups)
    assert "scheduling.k8s.io" in groups and "rbac.authorization.k8s.io" in groups


def test_kai_serves_queues_v2_and_podgroups_v2alpha2_with_status():
    assert group_versions(SchedulerMode.KAI)["scheduling.run.ai"] == ["v2", "v2alpha2"]
    names = {r["name"]: r for r in resource_list("scheduling.run.ai", "v2alpha2", SchedulerMode.KAI)["resources"]}
    assert names["podgroups"]["kind"] == "PodGroup" and names["podgroups"]["shortNames"] == ["pg"]
    assert "podgroups/status" in names
    assert lookup("scheduling.run.ai", "v2", "queues", SchedulerMode.KAI).namespaced is False
    assert lookup("scheduling.run.ai", "v2", "queues", SchedulerMode.VOLCANO) is None


def test_volcano_queue_has_status_and_podgroup_has_none():
    names = {r["name"]: r for r in resource_list("scheduling.volcano.sh", "v1beta1", SchedulerMode.VOLCANO)["resources"]}
    assert names["queues"]["shortNames"] == ["q", "queue-v1beta1"] and "queues/status" in names
    assert names["podgroups"]["namespaced"] and "podgroups/status" not in names
    assert sorted(names["queues"]["verbs"]) == sorted(["create", "delete", "deletecollection", "get", "list", "patch",
                                                       "update", "watch"])


def test_kueue_resources_are_writable_with_status():
    names = {r["name"] for r in resource_list("kueue.x-k8s.io", "v1beta1", SchedulerMode.KUEUE)["resources"]}
    assert {"workloads/status", "clusterqueues/status", "localqueues/status", "resourceflavors"} <= names


@pytest.mark.parametrize("mode, api_version", [("volcano", "scheduling.volcano.sh/v1beta1"),
                                               ("kai", "scheduling.run.ai/v2")])
def test_the_store_writes_the_modes_own_queue_kind(tmp_path, mode, api_version):
    state = mode_state(tmp_path, mode)
    queue = state.store.get("queues", None, "team-vision")
    assert queue["apiVersion"] == api_version and queue["kind"] == "Queue"
