"""The names a platform's text may refer to: read from the cluster's objects and from the wave's pods."""

from __future__ import annotations

from gpupoc.pipeline.cluster_names import contexts, gather_names, names_from_pods
from gpupoc.pipeline.k8s import Response
from gpupoc.pipeline.readable import Cause, causes_named
from gpupoc.podspec import labels as L

from .fake_api import PLAN


class Paths:
    """GET path -> list items (everything else 404, as an API the platform does not serve)."""

    def __init__(self, items: dict[str, list[dict]]):
        self.items = items
        self.asked: list[str] = []

    def call(self, method, path, **_):
        self.asked.append(path)
        if method == "GET" and path in self.items:
            return Response(200, {"items": self.items[path]})
        return Response(404, {"message": "not found"})


def named(name: str, **extra) -> dict:
    return {"metadata": {"name": name}, **extra}


def plan_with(adapter: str):
    return PLAN.model_copy(update={"platform": PLAN.platform.model_copy(update={"adapter": adapter})})


def test_nodes_taints_priority_classes_quotas_and_kueue_queues_are_read_by_name():
    api = Paths({
        "/api/v1/nodes": [named("gpu-a", spec={"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]})],
        "/apis/scheduling.k8s.io/v1/priorityclasses": [named("gpupoc-high")],
        "/api/v1/namespaces/team-a/resourcequotas": [named("team-a-gpu")],
        "/apis/kueue.x-k8s.io/v1beta1/clusterqueues": [named("cq-training")],
        "/apis/kueue.x-k8s.io/v1beta1/resourceflavors": [named("h100")],
        "/apis/kueue.x-k8s.io/v1beta1/namespaces/team-a/localqueues": [named("lq-a")]})
    names = gather_names(api, plan_with("kueue"), ["team-a"])
    assert {"cq-training", "h100", "lq-a", "team-a-gpu"} <= names.queues
    assert (names.nodes, names.taints, names.priority_classes) == ({"gpu-a"}, {"nvidia.com/gpu"}, {"gpupoc-high"})
    assert not any("volcano" in p for p in api.asked), "a Kueue plan reads no Volcano queues"


def test_volcano_podgroups_give_their_gangs_sizes():
    api = Paths({"/apis/scheduling.volcano.sh/v1beta1/queues": [named("team-a")],
                 "/apis/scheduling.volcano.sh/v1beta1/namespaces/team-a/podgroups": [
                     named("g-1", spec={"minMember": 4})]})
    names = gather_names(api, plan_with("volcano"), ["team-a"])
    assert "team-a" in names.queues and names.pod_groups == {"g-1"} and names.gang_sizes == {"g-1": {4}}


def test_an_unserved_api_contributes_nothing():
    names = gather_names(Paths({}), plan_with("kai"), ["team-a"])
    assert not names.nodes and not names.pod_groups and not names.taints


def pod(name: str, item: str, gang: str | None = None, uid: str = "") -> dict:
    return {"metadata": {"name": name, "namespace": "team-a", "uid": uid, "labels": {L.GANG: gang} if gang else {},
                         "annotations": {L.ITEM: item}},
            "spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}


def test_a_gang_counts_its_members_once_whatever_their_attempts():
    pods = [pod(f"m{i}-x", f"m{i}", "g") for i in range(3)] + [pod("m0-y", "m0", "g")]  # m0 resubmitted
    assert names_from_pods(pods).gang_sizes == {"g": {3}}


def test_each_pod_gets_its_own_context_and_others_are_the_workloads_ahead():
    pods = [pod("a-1", "a", uid="u-a"), pod("b-1", "b", uid="u-b")]
    context = contexts(pods, gather_names(Paths({}), None, ["team-a"]))
    a = context("team-a", "a-1")
    assert a.pod.resources == {"nvidia.com/gpu", "pods"} and "u-a" in a.pod.own
    assert causes_named("waiting behind b-1", a) == {Cause.POSITION}
    assert causes_named("a-1 waits", a) == set()
    assert context("team-a", "unknown").pod.name == "unknown"
