"""Who preempted each victim, from the platform's records only, and QC-13's judgement of it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from gpupoc.pipeline.preemptors import Binding, Facts, Judgement, KnownPod, judge, known_pod, named
from gpupoc.pipeline.workload_outcome import Deletion, Statement

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
UID = "039f34ac-5d2e-4b7a-9c1e-2f6a8b9d0e11"
VOLCANO = "system:serviceaccount:volcano-system:volcano-scheduler"


def victim(priority=1000, by=None, node="inference-node-1", ns="team-a", pod="qc-v-infer-1g-028-x"):
    """A preempted ``workload_runs`` row whose outcome came from kube-scheduler's DisruptionTarget condition."""
    return {"namespace": ns, "pod": pod, "priority": priority, "node": node, "outcome": "preempted",
            "outcome_by": by, "outcome_at": T0, "outcome_source": "condition DisruptionTarget",
            "outcome_reason": "PreemptionByScheduler"}


def said(message=f"Preempted by pod {UID} on node inference-node-1", reason="Preempted"):
    return [Statement(reason, message, T0, "event", "default-scheduler")]


def replica(uid=UID, priority=1_000_000, node="inference-node-1"):
    return {"metadata": {"namespace": "team-serving", "name": "svc-infer-7d9f-abcde", "uid": uid},
            "spec": {"priority": priority, "nodeName": node}}


def test_the_kube_schedulers_uid_only_event_is_parsed_for_its_uid_and_the_older_pod_name_form_still_is():
    assert named(victim(), said(), {}) == [(f"uid {UID}", "event Preempted")]
    assert named(victim(), said(), {UID: "team-serving/svc"}) == [("team-serving/svc", "event Preempted")]
    older = said("Preempted by team-b/high-1 on node training-node-1")
    assert named(victim(), older, {}) == [("team-b/high-1", "event Preempted")]


def test_a_failed_scheduling_note_of_the_victim_names_no_preemptor():
    note = said(f"0/3 nodes are available: preemption: not eligible due to pod {UID}.", "FailedScheduling")
    assert named(victim(), note, {}) == []


def test_a_preemptor_named_by_uid_is_resolved_from_an_observed_service_replica():
    facts = Facts()
    facts.add(known_pod(replica()))
    p = judge(victim(), said(), facts, within_queue=False)
    assert (p.judgement, p.preemptor, p.priority, p.by_higher) == \
        (Judgement.JUDGED, "team-serving/svc-infer-7d9f-abcde", 1_000_000, True)
    assert p.named_by == "event Preempted"


def test_a_preemptor_named_by_uid_is_resolved_from_the_audit_logs_binding_of_it():
    known = {"team-serving/svc-infer-7d9f-abcde": KnownPod("team-serving/svc-infer-7d9f-abcde", 1_000_000)}
    facts = Facts(bindings=[Binding("team-serving", "svc-infer-7d9f-abcde", UID, "system:kube-scheduler",
                                    T0 + timedelta(seconds=31))], lookup=known.get).with_bindings()
    p = judge(victim(), said(), facts, within_queue=False)
    assert (p.judgement, p.preemptor, p.by_higher) == (Judgement.JUDGED, "team-serving/svc-infer-7d9f-abcde", True)


def test_a_preemptor_resolved_to_a_lower_priority_pod_is_a_wrongful_preemption():
    facts = Facts()
    facts.add(known_pod(replica(priority=10)))
    assert judge(victim(), said(), facts, within_queue=False).by_higher is False


def test_an_unresolved_uid_leaves_the_preemption_not_verified_never_failed():
    p = judge(victim(), said(), Facts(), within_queue=False)
    assert (p.judgement, p.by_higher, p.preemptor) == (Judgement.UNRESOLVED, None, f"uid {UID}")
    assert "no known priority" in p.named_by


def test_a_pod_named_but_of_unknown_priority_is_unresolved():
    facts = Facts(uids={UID: "team-serving/gone"}, lookup=lambda key: None)
    assert judge(victim(), said(), facts, within_queue=False).judgement is Judgement.UNRESOLVED


def test_inside_one_shared_cluster_queue_another_tenants_preemption_is_judged_by_priority():
    facts = Facts(queues={"team-a": "ClusterQueue training", "team-b": "ClusterQueue training"})
    facts.add(KnownPod("team-b/high-1", 10000, "training-node-1"))
    p = judge(victim(priority=100, by="team-b/high-1", ns="team-a"), [], facts, within_queue=True)
    assert (p.judgement, p.by_higher) == (Judgement.JUDGED, True)
    facts.pods["team-b/high-1"] = KnownPod("team-b/high-1", 10, "training-node-1")
    assert judge(victim(priority=100, by="team-b/high-1"), [], facts, within_queue=True).by_higher is False


def test_across_cluster_queues_a_preemption_is_queue_policy_not_judged_by_priority():
    facts = Facts(queues={"team-a": "ClusterQueue a", "team-b": "ClusterQueue b"})
    facts.add(KnownPod("team-b/low-1", 10, "training-node-1"))
    p = judge(victim(priority=100, by="team-b/low-1"), [], facts, within_queue=True)
    assert (p.judgement, p.by_higher, p.preemptor) == (Judgement.OTHER_QUEUE, None, "team-b/low-1")
    assert judge(victim(priority=100, by="team-b/low-1"), [], facts, within_queue=False).by_higher is False


def _volcano_victim():
    row = victim(priority=100, node="training-node-1")
    row.update(outcome_source="event", outcome_reason="Evict", outcome_by=None)
    return row, said("Pod is evicted, because of preempt", "Evict")


def test_under_volcano_a_wrongful_preemption_followed_by_a_higher_placement_is_not_a_pass():
    row, evict = _volcano_victim()
    facts = Facts()
    facts.add(KnownPod("team-b/high-1", 10000, "training-node-1"))  # placed there after, named by nothing
    p = judge(row, evict, facts, within_queue=False)
    assert (p.judgement, p.by_higher) == (Judgement.UNRESOLVED, None)
    assert "names the preemptor" in p.named_by


def test_under_volcano_the_pod_the_scheduler_bound_first_after_deleting_the_victim_is_the_preemptor():
    row, evict = _volcano_victim()
    facts = Facts(deletions={("team-a", row["pod"]): [Deletion(VOLCANO, T0)]},
                  bindings=[Binding("team-b", "low-2", None, VOLCANO, T0 + timedelta(seconds=31)),
                            Binding("team-b", "high-1", None, VOLCANO, T0 + timedelta(seconds=50)),
                            Binding("team-b", "other", None, "system:kube-scheduler", T0 + timedelta(seconds=5))])
    facts.add(KnownPod("team-b/low-2", 50, "training-node-1"))
    facts.add(KnownPod("team-b/high-1", 10000, "training-node-1"))
    facts.add(KnownPod("team-b/other", 10, "training-node-1"))
    p = judge(row, evict, facts, within_queue=False)
    assert (p.judgement, p.preemptor, p.by_higher) == (Judgement.JUDGED, "team-b/low-2", False), \
        "the first bind by the deleting scheduler decides, not the highest pod placed later"
    assert p.named_by.startswith(f"audit log: {VOLCANO} deleted the victim")


def test_a_bind_long_after_the_delete_or_on_another_node_names_no_preemptor():
    row, evict = _volcano_victim()
    facts = Facts(deletions={("team-a", row["pod"]): [Deletion(VOLCANO, T0)]},
                  bindings=[Binding("team-b", "late", None, VOLCANO, T0 + timedelta(seconds=600)),
                            Binding("team-b", "elsewhere", None, VOLCANO, T0 + timedelta(seconds=5), "training-node-2")])
    facts.add(KnownPod("team-b/late", 10000, "training-node-1"))
    facts.add(KnownPod("team-b/elsewhere", 10000, None))
    assert judge(row, evict, facts, within_queue=False).judgement is Judgement.UNRESOLVED


def test_under_kueue_a_cohort_preemption_by_a_workload_gone_is_another_queues_not_unresolved():
    row = victim(priority=10000, by=f"uid {UID}")
    row.update(outcome_source="event", outcome_reason="Stopped", outcome_message=(
        f"Preempted to accommodate a workload (UID: {UID}, JobUID: UNKNOWN) due to Fair Sharing within the cohort"))
    p = judge(row, [], Facts(), within_queue=True)
    assert (p.judgement, p.by_higher) == (Judgement.OTHER_QUEUE, None)
    assert "Fair Sharing within the cohort" in p.named_by
    inside = dict(row, outcome_message=row["outcome_message"].replace(
        "Fair Sharing within the cohort", "prioritization in the ClusterQueue"))
    assert judge(inside, [], Facts(), within_queue=True).judgement is Judgement.UNRESOLVED
    assert judge(row, [], Facts(), within_queue=False).judgement is Judgement.UNRESOLVED, \
        "kube-scheduler has no queues: the words of a cohort do not apply"
