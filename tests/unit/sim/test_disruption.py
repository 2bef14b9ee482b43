"""What a taken-away pod goes through under each profile: its platform's marks and events, a graceful delete,
and audit events that name the controller that did it."""

from __future__ import annotations

import re

from gpupoc.sim.controllers import nodes

from .behaviour_helpers import (
    audited, condition, events, make_state, pod, preemption, submit,
)

KUEUE_MESSAGE = re.compile(r"Preempted to accommodate a workload \(UID: \S+, JobUID: [0-9a-f-]{36}\) due to "
                           r"prioritization in the ClusterQueue; preemptor path: \S+; preemptee path: \S+")


def _deleted_by(state, name: str) -> str:
    [ev] = audited(state, "delete", name)
    assert ev["objectRef"]["resource"] == "pods" and ev["responseStatus"]["code"] == 200
    return ev["user"]["username"]


def test_volcano_wording_evicts_a_preempted_pod_with_volcanos_event_and_condition(tmp_path):
    state = make_state(tmp_path, behaviours=["volcano-wording"])
    victim, _ = preemption(state)
    v = pod(state, victim)
    [ev] = events(state, victim, "Evict")
    assert (ev["type"], ev["message"], ev["source"]["component"]) == (
        "Warning", "Pod is evicted, because of preempt", "volcano")
    ready = condition(v, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "Evict")
    assert condition(v, "DisruptionTarget") is None and not events(state, victim, "Preempted")
    assert _deleted_by(state, victim) == "system:serviceaccount:volcano-system:volcano-scheduler"


def test_kai_wording_names_the_preempting_workload_and_deletes_as_kai(tmp_path):
    state = make_state(tmp_path, behaviours=["kai-wording"])
    victim, preemptor = preemption(state)
    [ev] = events(state, victim, "Evict")
    uid = pod(state, preemptor)["metadata"]["uid"]
    assert ev["message"] == (f"Pod team-vision/{victim} was preempted by higher priority workload "
                             f"team-vision/pg-{preemptor}-{uid}")
    assert ev["source"]["component"] == "kai-scheduler"
    assert _deleted_by(state, victim) == "system:serviceaccount:kai-scheduler:kai-scheduler"


def test_kueue_requeue_stops_a_preempted_pod_in_kueues_words(tmp_path):
    state = make_state(tmp_path, behaviours=["kueue-requeue"])
    victim, _ = preemption(state)
    target = condition(pod(state, victim), "TerminationTarget")
    assert (target["status"], target["reason"]) == ("True", "WorkloadEvictedDueToPreempted")
    assert KUEUE_MESSAGE.fullmatch(target["message"]), target["message"]
    [stopped] = events(state, victim, "Stopped")
    assert stopped["source"]["component"] == "pod-kueue-controller" and stopped["message"] == target["message"]
    assert _deleted_by(state, victim) == "system:serviceaccount:kueue-system:kueue-controller-manager"
    assert not events(state, victim, "Preempted")


def test_a_pod_lost_with_its_node_is_audited_as_the_node_controller(tmp_path):
    state = make_state(tmp_path)
    submit(state, "lost", gpus=8, gated=False)
    state.scheduler.run_pass()
    lost = pod(state, "lost")
    nodes.evict_pod(state, lost, lost["spec"]["nodeName"])
    assert pod(state, "lost")["status"]["reason"] == "NodeLost"
    assert _deleted_by(state, "lost") == "system:serviceaccount:kube-system:node-controller"
    [patch] = audited(state, "patch", "lost", "status")
    assert patch["user"]["groups"] == ["system:serviceaccounts", "system:serviceaccounts:kube-system",
                                      "system:authenticated"]
    assert [p["metadata"]["name"] for p in state.store.list("pods", "team-vision")] == ["lost"], \
        "without a recreating profile nothing replaces the pod"


def test_under_volcano_the_audit_log_names_the_preemptor_by_its_schedulers_delete_and_next_bind(tmp_path):
    from gpupoc.pipeline.audit_deletes import bindings_from_events, deletions_from_events
    from gpupoc.pipeline.preemptors import Facts, Judgement, judge, known_pod

    from .behaviour_helpers import audit_events

    state = make_state(tmp_path, behaviours=["volcano-wording"])
    victim, preemptor = preemption(state)
    node = pod(state, victim)["spec"]["nodeName"]
    state.inventory.release(("team-vision", victim))  # its grace period over, the kubelet lets it go
    state.store.delete("pods", "team-vision", victim)
    state.scheduler.run_pass()
    high = pod(state, preemptor)
    [bind] = audited(state, "create", preemptor, "binding")
    assert bind["user"]["username"] == "system:serviceaccount:volcano-system:volcano-scheduler"
    assert bind["objectRef"]["uid"] == high["metadata"]["uid"] and bind["responseStatus"]["code"] == 201
    assert high["spec"]["nodeName"] == node
    log = audit_events(state)
    facts = Facts(bindings=bindings_from_events(log), deletions=deletions_from_events(log, ["team-vision"]))
    for p in state.store.list("pods", "team-vision"):
        facts.add(known_pod(p))
    row = {"namespace": "team-vision", "pod": victim, "priority": 10, "node": node, "outcome_by": None,
           "outcome_source": "event", "outcome_reason": "Evict"}
    p = judge(row, [], facts, within_queue=True)
    assert (p.judgement, p.preemptor, p.by_higher) == (Judgement.JUDGED, f"team-vision/{preemptor}", True)
