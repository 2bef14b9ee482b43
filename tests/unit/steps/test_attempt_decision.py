"""A wave task's decision on its ended attempt: from the records the evidence reads, recorded for the observer."""

from __future__ import annotations

import json

from gpupoc.common.outcomes import WorkloadOutcome as O
from gpupoc.pipeline.attempts import NextAttempt
from gpupoc.pipeline.common import repo_root
from gpupoc.pipeline.k8s import Response
from gpupoc.pipeline.workload_outcome import Rejection
from gpupoc.plan import load_plan_file
from gpupoc.steps import attempt_decision as D
from gpupoc.steps.context import RunContext

PLAN = str(repo_root() / "plans" / "default.yaml")
NS, POD = "team-nlp", "qc-v-sweep-1g-003-ab12cd34"


class Api:
    """A cluster where the pod is ``pod`` (None: gone) and the namespace has ``events``."""

    def __init__(self, pod=None, events=()):
        self.pod, self.events = pod, list(events)

    def call(self, method, path, **_):
        if path == f"/api/v1/namespaces/{NS}/pods/{POD}":
            return Response(200, self.pod) if self.pod else Response(404, {"message": "not found"})
        if path == f"/api/v1/namespaces/{NS}/events":
            return Response(200, {"items": self.events})
        return Response(404, {"message": "not found"})


class Factory:
    def __init__(self, api):
        self.api = api

    def caller(self, context, component=""):
        return self.api


def run_context(tmp_path, api, audit: list[dict] | None = None) -> RunContext:
    log = tmp_path / "audit.log"
    log.write_text("".join(json.dumps(e) + "\n" for e in audit or []))
    plan = load_plan_file(PLAN)
    sources = plan.evidence_sources.model_copy(update={"audit_log_path": str(log)})
    ctx = RunContext(PLAN, "poc_queue_congestion", "manual__1", "queue_congestion", task="wave", _factory=Factory(api))
    ctx.__dict__["plan"] = plan.model_copy(update={"evidence_root": str(tmp_path / "evidence"),
                                                   "evidence_sources": sources})
    return ctx


def deleted_by(user: str) -> dict:
    return {"verb": "delete", "objectRef": {"resource": "pods", "namespace": NS, "name": POD},
            "user": {"username": user}, "responseStatus": {"code": 200},
            "requestReceivedTimestamp": "2026-12-01T09:00:05.000000Z"}


def test_a_pod_gone_without_an_event_is_preempted_when_the_audit_log_has_the_schedulers_delete(tmp_path):
    ctx = run_context(tmp_path, Api(), [deleted_by("system:kube-scheduler")])
    outcome, decision = D.decide(ctx, "qc-v-sweep-1g-003", NS, POD, 1, settle_s=0)
    assert outcome.outcome is O.PREEMPTED and outcome.source == "audit log"
    assert (decision.outcome, decision.next) == (O.PREEMPTED, NextAttempt.RESUBMIT)
    [again] = D.decisions(ctx)
    assert again == decision
    view = D.task_view(ctx)
    assert view.decisions[(NS, POD)] == decision and view.states is None


def test_the_observers_last_look_counts_when_the_pod_is_gone(tmp_path):
    ctx = run_context(tmp_path, Api())
    seen = {"metadata": {"name": POD, "namespace": NS}, "status": {"phase": "Running", "conditions": [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "message": "m"}]}}
    ctx.writer.write_json("observed_pods", [seen])
    outcome, decision = D.decide(ctx, "qc-v-sweep-1g-003", NS, POD, 1, settle_s=0)
    assert outcome.outcome is O.PREEMPTED and outcome.source == "condition DisruptionTarget"


def test_nothing_saying_why_is_lost_and_no_attempt_follows(tmp_path):
    ctx = run_context(tmp_path, Api())
    outcome, decision = D.decide(ctx, "qc-v-sweep-1g-003", NS, POD, 1, settle_s=0)
    assert (decision.outcome, decision.next) == (O.LOST, NextAttempt.NONE)


def test_past_the_resubmission_limit_no_attempt_follows_a_preemption(tmp_path):
    ctx = run_context(tmp_path, Api(), [deleted_by("system:kube-scheduler")])
    limit = ctx.spec.resubmission.limit
    _, decision = D.decide(ctx, "qc-v-sweep-1g-003", NS, POD, limit + 1, settle_s=0)
    assert (decision.outcome, decision.next) == (O.PREEMPTED, NextAttempt.NONE)


def test_a_pod_still_running_is_no_decision(tmp_path):
    running = {"metadata": {"name": POD, "namespace": NS}, "status": {"phase": "Running"}}
    ctx = run_context(tmp_path, Api(pod=running))
    outcome, decision = D.decide(ctx, "qc-v-sweep-1g-003", NS, POD, 1, settle_s=0)
    assert outcome.outcome is O.PENDING and decision is None and D.decisions(ctx) == []


def test_a_refusal_is_recorded_for_the_observer_as_the_items_end(tmp_path):
    ctx = run_context(tmp_path, Api())
    D.record_refusal(ctx, "qc-v-sweep-1g-003", NS, 1, Rejection(403, "exceeded quota: team-nlp-gpu"))
    view = D.task_view(ctx)
    assert view.refused["qc-v-sweep-1g-003"].outcome is O.REJECTED and not view.decisions


def test_the_tasks_message_says_the_outcome_the_attempt_and_the_record_as_the_evidence_keeps_them(tmp_path):
    ctx = run_context(tmp_path, Api())
    _, lost = D.decide(ctx, "qc-v-sweep-1g-003", NS, POD, 1, settle_s=0)
    assert D.task_message(lost) == (f"lost: pod {NS}/{POD} (none: vanished; no event, condition or audit record "
                                    "says why)")
    refused = D.record_refusal(ctx, "qc-v-sweep-1g-004", NS, 1, Rejection(403, "denied: no", None))
    assert D.task_message(refused) == "rejected: item qc-v-sweep-1g-004 (admission: HTTP 403 denied: no)"


def bound(node: str) -> dict:
    return {"verb": "create", "objectRef": {"resource": "pods", "subresource": "binding", "namespace": NS,
                                            "name": POD}, "user": {"username": "system:kube-scheduler"},
            "requestObject": {"target": {"name": node}}, "responseStatus": {"code": 201},
            "requestReceivedTimestamp": "2026-12-01T09:00:01.000000Z"}


def test_audit_reads_held_by_collection_answer_for_the_run_s_namespaces_from_then_on(tmp_path):
    ctx = run_context(tmp_path, Api(), [bound("gpu-node-1"), deleted_by("system:kube-scheduler")])
    assert (NS, POD) in ctx.platform_records().deletions and [b.node for b in ctx.audit_bindings()] == ["gpu-node-1"]
    ctx.hold_audit_reads()
    (tmp_path / "audit.log").write_text("")  # what the log says from now on is not read again
    assert (NS, POD) in ctx.platform_records().deletions
    assert (NS, POD) in ctx.platform_records([NS]).deletions
    assert ctx.platform_records(["team-vision"]).deletions == {}, "another namespace's view holds no other's deletes"
    assert [b.node for b in ctx.audit_bindings()] == ["gpu-node-1"]
    fresh = run_context(tmp_path, Api())
    assert fresh.platform_records().deletions == {} and fresh.audit_bindings() == [], "a context holding none reads"
