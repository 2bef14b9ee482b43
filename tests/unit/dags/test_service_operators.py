"""The services' operators act as the tenant: the resource operators' hook carries the tenant's context, and a
load-pod task resumed after its deferral (a fresh operator) takes the tenant's identity from the plan again; a
load-pod task that failed records it for the services' observer."""

from __future__ import annotations

import pytest
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from kubernetes.client.exceptions import ApiException

from gpupoc.dags.service_operators import (ServiceLoadOperator, TenantCreateResourceOperator,
                                           TenantDeleteResourceOperator)
from gpupoc.pipeline.common import repo_root
from gpupoc.steps.context import RunContext
from gpupoc.steps.services import load_failed

from ..steps.conftest import write_plan

PLAN = str(repo_root() / "plans" / "default.yaml")


def test_a_resumed_load_task_restores_the_tenant_s_identity_and_its_pod_from_the_plan():
    op = ServiceLoadOperator(task_id="service_traffic", service="svc-infer", plan_path=PLAN,
                             test_class="queue_congestion")
    assert getattr(op, "cluster_context", None) is None, "a fresh operator knows no identity yet"
    name = op._from_plan({"run_id": "manual__1"})
    assert op.cluster_context == "team-serving" and op.config_file.endswith("var/sim/kubeconfig")
    assert op.namespace == "team-serving" and name.startswith("svc-infer-") and name.endswith("-load")
    assert op.arguments[0] == "load" and op.labels["gpupoc.io/role"] == "service-load"
    assert op.on_finish_action.value == "keep_pod", "its log is the evidence: the cleanup deletes it"


def test_the_resource_operators_hook_has_the_tenant_s_context_and_reruns_count_as_done():
    create = TenantCreateResourceOperator(task_id="deploy_service", yaml_conf="kind: Service", namespace="team-serving",
                                          kubernetes_conn_id=None, config_file="/tmp/kubeconfig",
                                          cluster_context="team-serving", plan_path=PLAN, test_class="queue_congestion")
    assert create.hook.cluster_context == "team-serving" and create.hook.config_file == "/tmp/kubeconfig"
    assert (create.verb, create.done_statuses) == ("create", (409,))
    delete = TenantDeleteResourceOperator(task_id="delete_service", yaml_conf="kind: Service", namespace="team-serving",
                                          kubernetes_conn_id=None, plan_path=PLAN, test_class="queue_congestion")
    assert (delete.verb, delete.done_statuses) == ("delete", (404,))


def test_a_load_task_whose_pod_was_refused_records_it_for_the_services_observer(tmp_path, monkeypatch):
    plan = str(write_plan(tmp_path))
    op = ServiceLoadOperator(task_id="service_traffic", service="svc-infer", plan_path=plan,
                             test_class="queue_congestion")

    def refused(self, context):
        raise ApiException(status=403, reason="Forbidden")

    monkeypatch.setattr(KubernetesPodOperator, "execute", refused)
    context = {"run_id": "manual__1"}
    with pytest.raises(ApiException):
        op.execute(context)
    ctx = RunContext(plan, "poc_queue_congestion", "manual__1", "queue_congestion")
    assert load_failed(ctx, "svc-infer")
    assert ctx.read_file("service_load_failed-svc-infer")["status"] == 403
    monkeypatch.setattr(KubernetesPodOperator, "execute", lambda self, context: None)
    op.execute(context)
    assert not load_failed(ctx, "svc-infer"), "a new try clears the old failure"
