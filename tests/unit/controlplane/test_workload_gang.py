"""The Workload API objects of a gang: the Workload, its PodGroup, and pods naming the group."""

from __future__ import annotations

from gpupoc.controlplane import workload_gang as W


def test_a_gang_is_a_workload_a_pod_group_from_its_template_and_its_pods():
    objs = W.gang("g", "ns", 3, 2)
    wl, group, *pods = objs
    assert wl["apiVersion"] == group["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert wl["spec"]["podGroupTemplates"] == [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 3}}}]
    assert group["spec"]["workloadRef"] == {"workloadName": "g", "templateName": "workers"}
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}
    assert [p["metadata"]["name"] for p in pods] == ["g-0", "g-1", "g-2"]
    assert all(p["spec"]["schedulingGroup"] == {"podGroupName": "g"} for p in pods)
    assert pods[0]["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "2"}}


def test_min_count_may_be_less_than_the_gang_and_a_cpu_pod_asks_no_gpu():
    wl, group, *pods = W.gang("g", "ns", 4, 0, min_count=2)
    assert group["spec"]["schedulingPolicy"]["gang"]["minCount"] == 2 and len(pods) == 4
    assert pods[0]["spec"]["containers"][0]["resources"] == {}


def test_initially_scheduled_reads_the_schedulers_condition():
    cond = {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable"}
    assert W.initially_scheduled({"status": {"conditions": [{"type": "Other"}, cond]}}) == cond
    assert W.initially_scheduled({"status": {}}) is None
