"""The run's PodGroups: created once per gang for Volcano and KAI (a 409 of an earlier try is fine), none for
Kueue, and a refusal named with the fix."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from gpupoc.exceptions import GpupocError
from gpupoc.pipeline.common import repo_root
from gpupoc.pipeline.k8s import Response
from gpupoc.plan import class_items, load_plan
from gpupoc.plan.model import Adapter
from gpupoc.steps.gangs import create_pod_groups, delete_pod_groups

TC = "queue_congestion"


class Recorder:
    def __init__(self, status: int = 201):
        self.status, self.calls = status, []

    def call(self, method, path, *, body=None, **_):
        self.calls.append((method, path, body))
        return Response(self.status, {"message": "denied"} if self.status >= 400 else (body or {}))


@dataclass
class Ctx:
    plan: object
    api: Recorder
    run_id: str = "scheduled__2026-12-01"
    test_class: str = TC
    purposes: list = field(default_factory=list)

    def wave_items(self):
        return class_items(self.plan, TC)

    def admin(self, purpose=""):
        self.purposes.append(purpose)
        return self.api


def plan(adapter):
    return load_plan(repo_root() / "plans" / f"{adapter}.yaml")


@pytest.mark.parametrize("adapter, api", [("volcano", "scheduling.volcano.sh/v1beta1"),
                                          ("kai", "scheduling.run.ai/v2alpha2")])
def test_one_podgroup_per_gang_is_created_in_its_tenants_namespace(adapter, api):
    ctx = Ctx(plan(adapter), Recorder())
    out = create_pod_groups(ctx)
    posts = [(path, body) for method, path, body in ctx.api.calls if method == "POST"]
    gangs = {i.gang for i in class_items(ctx.plan, TC) if i.gang}
    assert out["gangs"] == len(gangs) >= 2 and len(posts) == len(gangs)
    assert {p for p, _ in posts} == {f"/apis/{api}/namespaces/team-nlp/podgroups",
                                     f"/apis/{api}/namespaces/team-vision/podgroups"}
    assert all(b["metadata"]["labels"]["gpupoc.io/run-id"] == "scheduled__2026-12-01" for _, b in posts)


def test_a_podgroup_made_by_an_earlier_try_counts_as_created():
    out = create_pod_groups(Ctx(plan("volcano"), Recorder(409)))
    assert len(out["pod_groups"]) == out["gangs"] >= 2


def test_kueue_groups_pods_by_label_and_needs_no_object():
    ctx = Ctx(plan("kueue"), Recorder())
    assert create_pod_groups(ctx)["pod_groups"] == [] and ctx.api.calls == []
    assert delete_pod_groups(ctx) == [] and ctx.api.calls == []


def test_a_refused_podgroup_fails_naming_the_adapter_and_the_fix():
    with pytest.raises(GpupocError, match="could not be created.*HTTP 403.*serves the volcano API"):
        create_pod_groups(Ctx(plan("volcano"), Recorder(403)))


def test_the_runs_podgroups_are_deleted_and_a_missing_one_is_gone_already():
    ctx = Ctx(plan("kai"), Recorder(404))
    assert delete_pod_groups(ctx) == []
    assert [m for m, _, _ in ctx.api.calls] == ["DELETE", "DELETE"]


def workload_api_plan():
    p = plan("kueue")
    platform = p.platform.model_copy(update={"adapter": Adapter.KUBE_SCHEDULER, "options": p.platform.options.model_copy(
        update={"gangs": "workload-api"})})
    return p.model_copy(update={"platform": platform})


def test_workload_api_gangs_get_a_workload_then_its_podgroup_and_are_deleted_in_reverse():
    ctx = Ctx(workload_api_plan(), Recorder())
    out = create_pod_groups(ctx)
    posts = [(path, body) for method, path, body in ctx.api.calls if method == "POST"]
    assert out["gangs"] >= 2 and len(posts) == 2 * out["gangs"]
    first, second = posts[:2]
    assert first[0].endswith("/workloads") and first[1]["kind"] == "Workload"
    assert second[0].endswith("/podgroups") and second[1]["spec"]["workloadRef"]["workloadName"] == \
        first[1]["metadata"]["name"]
    ctx.api.calls.clear()
    assert delete_pod_groups(ctx) == []
    assert [p.rsplit("/", 2)[-2] for _, p, _ in ctx.api.calls[:2]] == ["podgroups", "workloads"]


def test_a_refused_workload_names_the_workload_api_and_how_to_get_it():
    with pytest.raises(GpupocError, match="Workload.*HTTP 404.*GenericWorkload.*--cluster kwok"):
        create_pod_groups(Ctx(workload_api_plan(), Recorder(404)))


def test_workload_api_gang_objects_carry_the_pods_priority_class_and_value():
    ctx = Ctx(workload_api_plan(), Recorder())
    create_pod_groups(ctx)
    bodies = [body for method, _, body in ctx.api.calls if method == "POST"]
    values = {pc.name: pc.value for pc in ctx.plan.priority_classes}
    group = next(b for b in bodies if b["kind"] == "PodGroup")
    assert group["spec"]["priority"] == values[group["spec"]["priorityClassName"]]
    template = next(b for b in bodies if b["kind"] == "Workload")["spec"]["podGroupTemplates"][0]
    assert template["priorityClassName"] == group["spec"]["priorityClassName"]


class Uids(Recorder):
    """Answers each creation with the object and a uid, as the API server does."""

    def call(self, method, path, *, body=None, **kw):
        r = super().call(method, path, body=body, **kw)
        return Response(r.status, {**(r.body or {}), "metadata": {**(body or {}).get("metadata", {}),
                                                                  "uid": f"uid-{len(self.calls)}"}})


class Files:
    def __init__(self):
        self.written = {}

    def write_json(self, name, obj):
        self.written[name] = obj


def test_the_uid_of_each_workload_api_pod_group_is_kept_with_its_gang():
    ctx = Ctx(workload_api_plan(), Uids())
    ctx.writer = Files()
    create_pod_groups(ctx)
    groups = ctx.writer.written["gang_groups"]
    gangs = {i.gang for i in class_items(ctx.plan, TC) if i.gang}
    assert len(groups) == len(gangs) and all(g["gang"].startswith(tuple(gangs)) for g in groups.values())
