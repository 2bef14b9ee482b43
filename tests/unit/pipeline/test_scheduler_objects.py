"""The scheduler's own objects joined to each pod: Kueue Workloads and positions, Volcano and KAI PodGroups."""

from __future__ import annotations

from dataclasses import replace

from gpupoc.pipeline import scheduler_objects as S
from gpupoc.pipeline.k8s import Response
from gpupoc.pipeline.readable import ExplainContext, PodRefs
from gpupoc.pipeline.timelines import Observation
from gpupoc.podspec import labels as L

from .fake_api import PLAN, T0

CTX = ExplainContext(PodRefs("team-nlp", "p1"))

QUOTA = ("couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor "
         "training, 4 more needed")
GANG = "1/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable"
QUEUE = "queue resource quota insufficient: insufficient nvidia.com/gpu"


class Paths:
    """GET path -> list items (everything else 404)."""

    def __init__(self, items: dict[str, list[dict]]):
        self.items = items

    def call(self, method, path, **_):
        if method == "GET" and path in self.items:
            return Response(200, {"items": self.items[path]})
        return Response(404, {"message": "not found"})


def plan_with(adapter: str):
    return PLAN.model_copy(update={"platform": PLAN.platform.model_copy(update={"adapter": adapter})})


def pod(name, ns="team-nlp", annotations=None, labels=None):
    return {"metadata": {"name": name, "namespace": ns, "annotations": annotations or {}, "labels": labels or {}}}


def obs(name, ns="team-nlp", **kw):
    return Observation(taken_at=T0, pod=name, namespace=ns, **kw)


def test_kueue_pods_get_their_workloads_quota_message_and_their_position():
    wl = {"metadata": {"name": "g", "namespace": "team-nlp", "ownerReferences": [{"kind": "Pod", "name": "p1"},
                                                                               {"kind": "Pod", "name": "p2"}]},
          "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": QUOTA}]}}
    vis = {"metadata": {"name": "g", "ownerReferences": [{"kind": "Pod", "name": "p1"}, {"kind": "Pod", "name": "p2"}]},
           "positionInClusterQueue": 3}
    api = Paths({f"{S.KUEUE_API}/namespaces/team-nlp/workloads": [wl],
                 f"{S.KUEUE_VISIBILITY}/namespaces/team-nlp/localqueues/training/pendingworkloads": [vis]})
    gated = obs("p1", reason="SchedulingGated", message="Scheduling is blocked due to non-empty scheduling gates")
    [o] = S.explain(api, plan_with("kueue"), ["team-nlp"], [pod("p1")], [], [gated])
    assert o.scheduler_said == (("Pending", QUOTA, "Workload team-nlp/g condition QuotaReserved"),)
    assert o.position == 3
    assert o.explanation(CTX) == ("Pending", QUOTA)


def test_volcano_pods_read_the_enqueue_event_first_while_pending_and_the_gang_condition_first_once_enqueued():
    def pg(phase):  # a gang of four: its message counts it
        return {"metadata": {"name": "g", "namespace": "team-nlp"}, "spec": {"minMember": 4},
                "status": {"phase": phase, "conditions": [
            {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources", "message": GANG}]}}
    event = {"metadata": {"namespace": "team-nlp"}, "involvedObject": {"kind": "PodGroup", "name": "g",
                                                                        "namespace": "team-nlp"},
             "reason": "Unschedulable", "message": QUEUE, "lastTimestamp": "2026-11-30T09:00:05Z"}
    member = pod("p1", annotations={"scheduling.k8s.io/group-name": "g"}, labels={L.GANG: "g"})
    path = f"{S.VOLCANO_PODGROUPS}/namespaces/team-nlp/podgroups"
    [o] = S.explain(Paths({path: [pg("Pending")]}), plan_with("volcano"), ["team-nlp"], [member], [event], [obs("p1")])
    assert [m for _, m, _ in o.scheduler_said] == [QUEUE, GANG] and o.gang == "g"
    [o] = S.explain(Paths({path: [pg("Inqueue")]}), plan_with("volcano"), ["team-nlp"], [member], [event], [obs("p1")])
    assert [m for _, m, _ in o.scheduler_said] == [GANG, QUEUE]
    assert o.scheduler_said[0][2] == "PodGroup team-nlp/g (Inqueue) condition Unschedulable"


def test_kai_pods_get_the_reason_of_their_podgroups_scheduling_condition():
    over = ("Non-preemptible workload is over quota. Workload requested 4 GPUs, but team-nlp quota is 8 GPUs, while 8 "
            "GPUs are already allocated for non-preemptible pods. Use a preemptible workload to go over quota.")
    pg = {"metadata": {"name": "pg-1", "namespace": "team-nlp"}, "status": {"schedulingConditions": [
        {"type": "UnschedulableOnNodePool", "reason": "Unschedulable", "message": f"NonPreemptibleOverQuota: {over}",
         "reasons": [{"reason": "NonPreemptibleOverQuota", "message": over}]}]}}
    api = Paths({f"{S.KAI_PODGROUPS}/namespaces/team-nlp/podgroups": [pg]})
    [o] = S.explain(api, plan_with("kai"), ["team-nlp"], [pod("p1", annotations={"pod-group-name": "pg-1"})], [],
                    [obs("p1")])
    assert o.scheduler_said[0][:2] == ("NonPreemptibleOverQuota", over)
    assert o.explanation(CTX) == ("NonPreemptibleOverQuota", over)


def test_empty_podgroup_messages_are_not_recorded_and_leave_the_pod_unexplained():
    pg = {"metadata": {"name": "g", "namespace": "team-nlp"}, "status": {"phase": "Inqueue", "conditions": [
        {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources", "message": ""}]}}
    api = Paths({f"{S.VOLCANO_PODGROUPS}/namespaces/team-nlp/podgroups": [pg]})
    opaque = obs("p1", reason="Unschedulable", message="0/5 nodes are available.")
    [o] = S.explain(api, plan_with("volcano"), ["team-nlp"], [pod("p1", annotations={"scheduling.k8s.io/group-name": "g"})],
                    [], [opaque])
    assert o.scheduler_said == () and o.explanation(CTX) == ("Unschedulable", "0/5 nodes are available.")


def test_the_observer_records_a_podgroups_texts_as_said_without_judging_them():
    """Whether a text explains the wait is judged once, by the reconstruction (``test_congestion``): a text
    naming a gang of another size is recorded all the same."""
    said = {"type": "Unschedulable", "status": "True", "reason": "NotEnoughTasks",
            "message": "Not enough valid tasks for gang-scheduling, valid: 1, min: 4"}
    member = pod("p1", annotations={"scheduling.k8s.io/group-name": "g"}, labels={L.GANG: "g"})
    path = f"{S.VOLCANO_PODGROUPS}/namespaces/team-nlp/podgroups"
    for size in (4, 2):
        pg = {"metadata": {"name": "g", "namespace": "team-nlp"}, "spec": {"minMember": size},
              "status": {"phase": "Inqueue", "conditions": [said]}}
        [o] = S.explain(Paths({path: [pg]}), plan_with("volcano"), ["team-nlp"], [member], [], [obs("p1")])
        assert o.scheduler_said == (("NotEnoughTasks", said["message"],
                                     "PodGroup team-nlp/g (Inqueue) condition Unschedulable"),), size


def test_kube_scheduler_plans_read_no_scheduler_objects_but_keep_the_gang():
    api = Paths({})
    [o] = S.explain(api, PLAN, ["team-nlp"], [pod("p1", labels={L.GANG: "g-1"})], [], [obs("p1")])
    assert o == replace(obs("p1"), gang="g-1")


def test_podgroup_events_that_name_a_pod_are_statements_about_it():
    e = {"metadata": {"namespace": "team-nlp"}, "involvedObject": {"kind": "PodGroup", "name": "pg-a"},
         "reason": "Evict", "message": "Pod team-nlp/p-1 was preempted by workload team-vision/pg-b.",
         "lastTimestamp": "2026-11-30T09:00:05Z"}
    said = S.podgroup_statements([e])
    assert [s.reason for s in said[("team-nlp", "p-1")]] == ["Evict"]


class LocalQueues:
    """GET of one LocalQueue -> its object (everything else 404)."""

    def __init__(self, cluster_queues: dict[str, str]):
        self.cluster_queues = cluster_queues

    def call(self, method, path, **_):
        ns = path.split("/namespaces/")[1].split("/")[0]
        if method == "GET" and "/localqueues/" in path and ns in self.cluster_queues:
            return Response(200, {"kind": "LocalQueue", "spec": {"clusterQueue": self.cluster_queues[ns]}})
        return Response(404, {"message": "not found"})


def test_tenants_whose_local_queues_feed_one_cluster_queue_share_one_priority_queue():
    plan = plan_with("kueue")
    training = [t.namespace for t in plan.tenants if t.queues.get("kueue") == "training"]
    assert len(training) == 2, "the default plan's two training tenants each have a LocalQueue named training"
    shared = S.kueue_cluster_queues(LocalQueues({ns: "training-cq" for ns in training}), plan)
    assert shared == {ns: "training-cq" for ns in training}
    queues = S.priority_queues(plan, shared)
    assert queues[training[0]] == queues[training[1]] == "ClusterQueue training-cq"
    unread = S.priority_queues(plan, {})
    assert unread[training[0]] != unread[training[1]], \
        "a LocalQueue the cluster did not show is its namespace's own: tenants are told apart as before"


def test_under_volcano_tenants_naming_one_queue_share_it_and_without_queues_each_tenant_is_its_own():
    plan = plan_with("volcano")
    queues = S.priority_queues(plan)
    assert len(set(queues.values())) == len({t.queues.get("volcano") for t in plan.tenants})
    kube = S.priority_queues(PLAN)
    assert sorted(kube.values()) == sorted(f"tenant {t.name}" for t in PLAN.tenants)
