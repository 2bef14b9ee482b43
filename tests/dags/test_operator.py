"""GpuWorkloadOperator: the pod comes from the plan and the workload key, identity survives a deferral."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator

from gpupoc.exceptions import ConfigError
from gpupoc.pipeline.common import repo_root
from gpupoc.common.constants import PIPELINE_GATE
from gpupoc.dags.operator import GpuWorkloadOperator
from gpupoc.plan import load_plan_file
from gpupoc.plan import class_items

PLAN = str(repo_root() / "plans" / "default.yaml")


def ctx(run_id: str = "manual__2026-11-30T09:00:00+00:00", map_index: int = 3) -> dict:
    ti = SimpleNamespace(dag_id="poc_queue_congestion", task_id="wave", map_index=map_index, try_number=1)
    return {"ti": ti, "run_id": run_id, "dag": SimpleNamespace()}


def operator(item, **kw) -> GpuWorkloadOperator:
    plan = load_plan_file(PLAN)
    tenant = plan.tenant(item.tenant)
    return GpuWorkloadOperator(task_id="wave", workload_key=item.name, name=item.name, namespace=tenant.namespace,
                               cluster_context=tenant.kube_context, plan_path=PLAN, test_class="queue_congestion",
                               **kw)


@pytest.fixture(scope="module")
def items():
    return class_items(load_plan_file(PLAN), "queue_congestion")


def test_the_pod_is_the_plans_workload_held_by_the_wave_gate(items):
    item = next(i for i in items if i.workload == "v-train-8g")
    op = operator(item)
    pod = op.build_pod_request_obj(ctx(), dry_run=True)
    c = pod.spec.containers[0]
    assert pod.metadata.namespace == "team-vision"
    assert pod.metadata.name.startswith(item.name + "-") and len(pod.metadata.name) == len(item.name) + 9
    assert [g.name for g in pod.spec.scheduling_gates] == [PIPELINE_GATE]
    assert c.name == "base" and c.image == "gpupoc/virtual:1.0"
    assert c.resources.limits["nvidia.com/gpu"] == "8" and c.resources.requests["nvidia.com/gpu"] == "8"
    assert pod.spec.priority_class_name == "gpupoc-high"
    assert pod.spec.node_selector == {"gpupoc.io/pool": "training"}
    assert pod.spec.restart_policy == "Never"
    env = {e.name: e.value for e in c.env}
    assert env["WORKLOAD_DURATION_SECONDS"] == "40"


def test_the_pod_carries_the_pipeline_labels_and_the_labels_airflow_finds_it_by(items):
    pod = operator(items[0]).build_pod_request_obj(ctx(map_index=0), dry_run=True)
    labels = pod.metadata.labels
    assert labels["gpupoc.io/test-class"] == "queue_congestion"
    assert labels["gpupoc.io/run-id"] == labels["run_id"]  # same sanitising as Airflow's
    assert (labels["dag_id"], labels["task_id"], labels["map_index"]) == ("poc_queue_congestion", "wave", "0")
    assert labels["kubernetes_pod_operator"] == "True"


def plan_workload_priority(item) -> str:
    return load_plan_file(PLAN).workload(item.workload).priority_class


def test_a_wave_entry_priority_override_reaches_the_pod(items):
    item = next(i for i in items if i.workload == "v-train-2g" and i.priority_class == "gpupoc-high")
    assert plan_workload_priority(item) != "gpupoc-high", "the override differs from the catalogue's class"
    pod = operator(item).build_pod_request_obj(ctx(), dry_run=True)
    assert pod.spec.priority_class_name == "gpupoc-high" and item.priority_class == "gpupoc-high"


def test_each_task_runs_as_its_tenant_with_the_plans_kubeconfig_and_timeout(items):
    plan = load_plan_file(PLAN)
    item = next(i for i in items if i.tenant == "team-serving")
    op = operator(item)
    op.build_pod_request_obj(ctx(), dry_run=True)
    assert op.cluster_context == "team-serving"
    assert op.config_file == str(plan.kubeconfig_path)
    assert op.startup_timeout_seconds >= plan.longest_acceptable_wait_seconds()
    assert op.schedule_timeout_seconds == op.startup_timeout_seconds


def test_operator_settings_are_deferrable_keep_pod_durable_with_one_second_polls(items):
    op = operator(items[0])
    assert op.deferrable is True and op.do_xcom_push is False
    assert op.on_finish_action.value == "keep_pod" and op.durable is True
    assert (op.startup_check_interval_seconds, op.poll_interval) == (5, 5)


def test_an_unknown_workload_key_names_the_key_and_the_fix(items):
    op = GpuWorkloadOperator(task_id="wave", workload_key="qc-nope-999", plan_path=PLAN,
                             test_class="queue_congestion")
    with pytest.raises(ConfigError) as exc:
        op.build_pod_request_obj(ctx(), dry_run=True)
    assert "qc-nope-999" in str(exc.value) and "prepare_wave" in str(exc.value)


def test_a_missing_plan_file_is_a_config_error_naming_the_path(tmp_path):
    op = GpuWorkloadOperator(task_id="wave", workload_key="x", plan_path=str(tmp_path / "none.yaml"),
                             test_class="queue_congestion")
    with pytest.raises(ConfigError, match="none.yaml"):
        op.build_pod_request_obj(ctx(), dry_run=True)


def test_resuming_after_deferral_restores_the_tenant_identity_before_reading_the_pod(items, monkeypatch):
    item = next(i for i in items if i.tenant == "team-nlp")
    seen = {}

    def fake_reentry(self, context, event):
        seen.update(config_file=self.config_file, cluster_context=self.cluster_context)
        return "resumed"

    monkeypatch.setattr(KubernetesPodOperator, "trigger_reentry", fake_reentry)
    op = GpuWorkloadOperator(task_id="wave", workload_key=item.name, plan_path=PLAN, test_class="queue_congestion")
    assert op.config_file is None
    assert op.trigger_reentry(ctx(), {"status": "success", "name": "p", "namespace": "team-nlp"}) == "resumed"
    assert seen == {"config_file": str(load_plan_file(PLAN).kubeconfig_path), "cluster_context": "team-nlp"}


def _wave_trigger(monkeypatch, events, logs=("epoch 1 loss 0.3", "done")):
    from datetime import datetime, timezone

    from airflow.providers.cncf.kubernetes.triggers.pod import KubernetesPodTrigger
    from airflow.triggers.base import TriggerEvent

    from gpupoc.dags.operator import WavePodTrigger

    async def parent_run(self):
        for payload in events:
            yield TriggerEvent(payload)

    class Hook:
        async def read_logs(self, name, namespace, container_name=None, since_seconds=None):
            return list(logs)

    monkeypatch.setattr(KubernetesPodTrigger, "run", parent_run)
    monkeypatch.setattr(WavePodTrigger, "hook", Hook(), raising=False)
    return WavePodTrigger(pod_name="p", pod_namespace="team-a", trigger_start_time=datetime.now(timezone.utc),
                          base_container_name="base", poll_interval=5)


def _events(trigger):
    import asyncio

    async def collect():
        return [e async for e in trigger.run()]
    return asyncio.run(collect())


def test_a_succeeded_pod_ends_its_task_in_the_triggerer_and_anything_else_resumes_it(monkeypatch):
    from airflow.triggers.base import TaskSuccessEvent, TriggerEvent

    done = _events(_wave_trigger(monkeypatch, [{"status": "success", "name": "p"}]))
    assert len(done) == 1 and isinstance(done[0], TaskSuccessEvent)
    failed = _events(_wave_trigger(monkeypatch, [{"status": "failed", "name": "p", "message": "exit 3"}]))
    assert len(failed) == 1 and type(failed[0]) is TriggerEvent and failed[0].payload["status"] == "failed"
    path, kwargs = _wave_trigger(monkeypatch, []).serialize()
    assert path == "gpupoc.dags.operator.WavePodTrigger" and kwargs["pod_name"] == "p"


def test_the_operator_defers_with_the_wave_trigger():
    from datetime import datetime, timezone

    import pytest
    from airflow.providers.cncf.kubernetes.triggers.pod import KubernetesPodTrigger
    from airflow.sdk.exceptions import TaskDeferred

    from gpupoc.dags.operator import GpuWorkloadOperator, WavePodTrigger

    op = GpuWorkloadOperator(task_id="wave", workload_key="qc-x-000", plan_path="plans/default.yaml",
                             test_class="queue_congestion")
    plain = KubernetesPodTrigger(pod_name="p", pod_namespace="team-a", trigger_start_time=datetime.now(timezone.utc),
                                 base_container_name="base")
    with pytest.raises(TaskDeferred) as deferred:
        op.defer(trigger=plain, method_name="trigger_reentry")
    assert type(deferred.value.trigger) is WavePodTrigger
    kept = deferred.value.trigger.serialize()[1]
    assert {k: v for k, v in kept.items() if k != "label_selector"} == plain.serialize()[1]
    assert kept["label_selector"] == "", "no run labels on this bare operator: the pod is read on its own"


def failed_reentry(monkeypatch, tmp_path, outcome, try_number: int = 1, gone: bool = False):
    """An operator whose pod ended with ``outcome`` (as the shared records say), deciding into ``tmp_path``;
    ``gone``: the pod no longer exists when the task resumes."""
    from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator

    from gpupoc.pipeline.workload_outcome import OutcomeRecord
    from gpupoc.steps import attempt_decision
    from gpupoc.steps.context import RunContext

    def boom(self, context, event):
        raise RuntimeError("Pod team-nlp/p not found after resuming from deferral")

    def run_context(self, context):
        rc = RunContext(PLAN, context["ti"].dag_id, context["run_id"], self.test_class, task="wave")
        rc.__dict__["plan"] = load_plan_file(PLAN).model_copy(update={"evidence_root": str(tmp_path)})
        return rc

    monkeypatch.setattr(KubernetesPodOperator, "trigger_reentry", boom)
    monkeypatch.setattr(GpuWorkloadOperator, "_pod_gone", lambda self, event: gone)
    monkeypatch.setattr(GpuWorkloadOperator, "_run_context", run_context)
    monkeypatch.setattr(attempt_decision, "attempt_outcome", lambda ctx, ns, name, settle_s=0: OutcomeRecord(
        outcome, None, "system:kube-scheduler", "delete", "deleted by system:kube-scheduler", "audit log"))
    return operator(next(i for i in items_of() if i.tenant == "team-nlp"))


def decided(tmp_path) -> list[dict]:
    import json

    return [json.loads(p.read_text()) for p in sorted(tmp_path.rglob("decision-*.json"))]


def items_of():
    from gpupoc.plan import class_items

    return class_items(load_plan_file(PLAN), "queue_congestion")


@pytest.mark.parametrize("outcome", ["preempted", "evicted"])
def test_a_preempted_or_evicted_pod_leaves_the_task_to_its_airflow_retry_saying_the_decision(
        monkeypatch, tmp_path, outcome):
    from airflow.sdk.exceptions import AirflowFailException

    from gpupoc.common.outcomes import WorkloadOutcome
    from gpupoc.dags.operator import AttemptEnded

    op = failed_reentry(monkeypatch, tmp_path, WorkloadOutcome(outcome))
    with pytest.raises(AttemptEnded) as ended:
        op.trigger_reentry(ctx(), {"status": "error", "name": "p", "namespace": "team-nlp"})
    assert not isinstance(ended.value, AirflowFailException), "Airflow retries it"
    assert str(ended.value).startswith(f"{outcome}: pod team-nlp/p by system:kube-scheduler")
    assert "retry submits the item again" in str(ended.value) and "not found" not in str(ended.value)
    assert [(d["outcome"], d["next"]) for d in decided(tmp_path)] == [(outcome, "resubmit")], "for the observer"


def test_a_pod_still_running_leaves_the_task_to_its_retry_which_reattaches(monkeypatch, tmp_path):
    from gpupoc.common.outcomes import WorkloadOutcome

    op = failed_reentry(monkeypatch, tmp_path, WorkloadOutcome.PENDING)
    with pytest.raises(RuntimeError, match="not found"):
        op.trigger_reentry(ctx(), {"status": "error", "name": "p", "namespace": "team-nlp"})
    assert decided(tmp_path) == [], "nothing decided: the attempt goes on"


def test_a_pod_gone_when_its_task_resumes_is_decided_by_gpupoc_never_read_by_the_provider(monkeypatch, tmp_path):
    from airflow.sdk.exceptions import AirflowFailException

    from gpupoc.common.outcomes import WorkloadOutcome
    from gpupoc.pipeline.attempts import TaskDecision
    from gpupoc.pipeline.workload_outcome import OutcomeRecord
    from gpupoc.steps import attempt_decision
    from gpupoc.steps.attempt_decision import task_message

    op = failed_reentry(monkeypatch, tmp_path, WorkloadOutcome.LOST, gone=True)
    monkeypatch.setattr(attempt_decision, "attempt_outcome", lambda ctx, ns, name, settle_s=0: OutcomeRecord(
        WorkloadOutcome.LOST, None, None, None, "vanished; no event, condition or audit record says why", "none"))
    with pytest.raises(AirflowFailException) as failed:
        op.trigger_reentry(ctx(), {"status": "error", "name": "p", "namespace": "team-nlp"})
    [recorded] = decided(tmp_path)
    assert str(failed.value) == task_message(TaskDecision.from_dict(recorded)), "the task says what it recorded"
    assert str(failed.value) == ("lost: pod team-nlp/p (none: vanished; no event, condition or audit record says "
                                 "why)")
    assert failed.value.__cause__ is None and "not found" not in str(failed.value)


@pytest.mark.parametrize("outcome", ["failed", "deleted", "lost"])
def test_a_pod_that_ended_otherwise_fails_its_task_for_good(monkeypatch, tmp_path, outcome):
    from airflow.sdk.exceptions import AirflowFailException

    from gpupoc.common.outcomes import WorkloadOutcome

    op = failed_reentry(monkeypatch, tmp_path, WorkloadOutcome(outcome))
    with pytest.raises(AirflowFailException, match=outcome):
        op.trigger_reentry(ctx(), {"status": "error", "name": "p", "namespace": "team-nlp"})
    assert [(d["outcome"], d["next"]) for d in decided(tmp_path)] == [(outcome, "none")]


def test_a_preemption_past_the_resubmission_limit_fails_the_task_naming_the_limit(monkeypatch, tmp_path):
    from airflow.sdk.exceptions import AirflowFailException

    from gpupoc.common.outcomes import WorkloadOutcome

    op = failed_reentry(monkeypatch, tmp_path, WorkloadOutcome.PREEMPTED)
    last_try = ctx()
    last_try["ti"].try_number = load_plan_file(PLAN).test_class("queue_congestion").resubmission.limit + 1
    with pytest.raises(AirflowFailException,
                       match="preempted: pod team-nlp/p by system:kube-scheduler.*resubmission.limit"):
        op.trigger_reentry(last_try, {"status": "error", "name": "p", "namespace": "team-nlp"})
    assert [(d["outcome"], d["next"]) for d in decided(tmp_path)] == [("preempted", "none")]


def test_a_pod_refused_at_admission_ends_its_task_with_the_platforms_message(monkeypatch, tmp_path):
    import json

    from airflow.sdk.exceptions import AirflowFailException
    from kubernetes.client.exceptions import ApiException

    from gpupoc.evidence import EvidenceWriter

    denied = 'admission webhook "validate.gpu-policy.platform.local" denied the request: [gpu-placement-policy] no'

    def refuse(self, pod_request_obj, context):
        exc = ApiException(status=403, reason="Forbidden")
        exc.body = json.dumps({"kind": "Status", "code": 403, "message": denied})
        raise exc

    op = failed_reentry(monkeypatch, tmp_path, None)
    monkeypatch.setattr(KubernetesPodOperator, "get_or_create_pod", refuse)
    monkeypatch.setattr(GpuWorkloadOperator, "_writer", lambda self, context: EvidenceWriter(
        tmp_path, context["ti"].dag_id, context["run_id"]))
    request = SimpleNamespace(metadata=SimpleNamespace(namespace="team-nlp"))
    with pytest.raises(AirflowFailException) as failed:
        op.get_or_create_pod(request, ctx())
    assert str(failed.value) == f"rejected: item {op.workload_key} (admission: HTTP 403 {denied})"
    assert [(d["outcome"], d["next"], d["pod"]) for d in decided(tmp_path)] == [("rejected", "none", None)]
