"""A multi-replica workload is submitted as one gang in each adapter's own grouping, and PodGroups are built
for the adapters that need one."""

from __future__ import annotations

import pytest

from gpupoc.plan import class_items, load_plan
from gpupoc.plan.model import Adapter
from gpupoc.pipeline.common import repo_root
from gpupoc.podspec import gangs as G
from gpupoc.podspec import labels as L
from gpupoc.podspec.build import build_pod

PLANS = {a: load_plan(repo_root() / "plans" / f"{a}.yaml") for a in ("kueue", "volcano", "kai")}
TC = "queue_congestion"


def gang_pods(plan, run_id="scheduled__2026-12-01"):
    items = [i for i in class_items(plan, TC) if i.gang]
    first = items[0].gang
    return [build_pod(plan.workload(i.workload), plan.tenant(i.tenant), plan, run_id=run_id, test_class=TC,
                      wave_gate=True, name=i.name, priority_class=i.priority_class)
            for i in items if i.gang == first]


def test_a_gangs_name_is_a_label_value_unique_per_run():
    a, b = G.gang_name("qc-v-ddp-4x1g-g004", "run-1"), G.gang_name("qc-v-ddp-4x1g-g004", "run-2")
    assert a != b and a.startswith("qc-v-ddp-4x1g-g004-") and L.is_valid_label_value(a)


def test_kueue_pods_of_a_gang_carry_the_pod_group_label_and_total_count():
    pods = gang_pods(PLANS["kueue"])
    names = {p.metadata.labels[G.KUEUE_GROUP] for p in pods}
    assert len(pods) == 4 and len(names) == 1
    assert {p.metadata.annotations[G.KUEUE_GROUP_COUNT] for p in pods} == {"4"}
    assert {p.metadata.labels[L.GANG] for p in pods} == names


@pytest.mark.parametrize("adapter, key", [("volcano", G.VOLCANO_GROUP), ("kai", G.KAI_GROUP)])
def test_volcano_and_kai_pods_of_a_gang_name_their_podgroup(adapter, key):
    pods = gang_pods(PLANS[adapter])
    assert len({p.metadata.annotations[key] for p in pods}) == 1
    assert G.KUEUE_GROUP not in pods[0].metadata.labels


def test_kai_pods_carry_the_plans_preemptibility():
    [p, *_] = gang_pods(PLANS["kai"])
    assert p.metadata.labels[G.KAI_PREEMPTIBILITY] == "preemptible"


def test_under_kube_scheduler_a_gang_is_only_a_label_of_the_pipeline():
    plan = PLANS["kueue"].model_copy(update={"platform": PLANS["kueue"].platform.model_copy(
        update={"adapter": Adapter.KUBE_SCHEDULER})})
    [p, *_] = gang_pods(plan)
    assert L.GANG in p.metadata.labels and G.KUEUE_GROUP not in p.metadata.labels
    assert not {G.VOLCANO_GROUP, G.KAI_GROUP} & set(p.metadata.annotations)


def test_a_single_pod_workload_joins_no_gang(plan):
    item = class_items(plan, TC)[0]
    p = build_pod(plan.workload(item.workload), plan.tenant(item.tenant), plan, run_id="r", test_class=TC,
                  wave_gate=True, name=item.name)
    assert L.GANG not in p.metadata.labels and L.GANG_KEY not in p.metadata.annotations


@pytest.mark.parametrize("adapter, api", [("volcano", "scheduling.volcano.sh/v1beta1"),
                                          ("kai", "scheduling.run.ai/v2alpha2")])
def test_the_podgroup_has_min_member_queue_and_priority_class(adapter, api):
    plan = PLANS[adapter]
    item = next(i for i in class_items(plan, TC) if i.gang)
    gang = G.Gang(item.gang, G.gang_name(item.gang, "r"), item.replicas, item.min_available)
    tenant = plan.tenant(item.tenant)
    body = G.pod_group(plan.platform.adapter, gang, plan.workload(item.workload), tenant,
                       priority_class=item.priority_class, run_id="r", test_class=TC)
    assert body["apiVersion"] == api and body["metadata"]["name"] == gang.name
    assert body["spec"]["minMember"] == item.min_available and body["spec"]["queue"] == tenant.queues[adapter]
    assert body["spec"]["priorityClassName"] == item.priority_class
    assert G.pod_groups_path(plan.platform.adapter, "team-nlp").startswith(f"/apis/{api}/namespaces/team-nlp/")


def test_kueue_and_kube_scheduler_need_no_podgroup():
    plan = PLANS["kueue"]
    item = next(i for i in class_items(plan, TC) if i.gang)
    gang = G.Gang(item.gang, "g", item.replicas, item.min_available)
    assert G.pod_group(Adapter.KUEUE, gang, plan.workload(item.workload), plan.tenant(item.tenant),
                       priority_class="p", run_id="r", test_class=TC) is None
    assert G.pod_groups_path(Adapter.KUBE_SCHEDULER, "ns") is None


def test_under_workload_api_gangs_each_pod_names_its_podgroup_of_min_available():
    base = PLANS["kueue"]
    plan = base.model_copy(update={"platform": base.platform.model_copy(update={
        "adapter": Adapter.KUBE_SCHEDULER, "options": base.platform.options.model_copy(update={"gangs": "workload-api"})})})
    pods = gang_pods(plan)
    groups = {p.spec.scheduling_group.pod_group_name for p in pods}
    assert len(groups) == 1 and groups == {p.metadata.labels[L.GANG] for p in pods}
    item = next(i for i in class_items(plan, TC) if i.gang)
    gang = G.Gang(item.gang, groups.pop(), item.replicas, item.min_available)
    objects = G.gang_objects(plan.platform, gang, plan.workload(item.workload), plan.tenant(item.tenant),
                             priority_class=item.priority_class, run_id="r", test_class=TC)
    assert [b["kind"] for _, b in objects] == ["Workload", "PodGroup"]
    assert objects[0][1]["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == item.min_available


def test_pods_of_the_adapters_own_grouping_name_no_scheduling_group():
    [p, *_] = gang_pods(PLANS["volcano"])
    assert p.spec.scheduling_group is None
