"""GpuWorkloadOperator: the pod comes from the plan and the workload key, identity survives a deferral."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator

from gpupoc.exceptions import ConfigError
from gpupoc.pipeline.common import PIPELINE_GATE, repo_root
from gpupoc.pipeline.operator import GpuWorkloadOperator, load_plan_file
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


def test_a_wave_entry_priority_override_reaches_the_pod(items):
    item = next(i for i in items if i.workload == "v-train-2g" and i.tenant == "team-nlp")
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
    assert (op.startup_check_interval_seconds, op.poll_interval) == (2, 5)


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
