"""kpo_kwargs: KubernetesPodOperator(**kwargs).build_pod_request_obj() gives the plan's pod, per adapter."""

from __future__ import annotations

import json
import warnings

import pytest
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from kubernetes.client import ApiClient

from gpupoc.plan import class_items
from gpupoc.podspec import build_pod, kpo_kwargs, safe_label_value

RUN_ID = "manual__2026-11-30T07:00:00+00:00"

ADAPTERS = ["kube-scheduler", "kueue", "volcano", "kai"]


def request_pod(plan, workload="v-train-8g", tenant="team-vision", *, serializable=False, wave_gate=True,
                test_class="queue_congestion", **kw):
    kwargs = kpo_kwargs(plan.workload(workload), plan.tenant(tenant), plan, run_id=RUN_ID, test_class=test_class,
                        wave_gate=wave_gate, name=kw.pop("name", "qc-item-000"), serializable=serializable, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. the deprecated reattach_on_restart
        op = KubernetesPodOperator(task_id="wave", **kwargs)
    return op.build_pod_request_obj(dry_run=True), kwargs


@pytest.mark.parametrize("serializable", [False, True], ids=["models", "json"])
@pytest.mark.parametrize("adapter", ADAPTERS)
def test_operator_pod_carries_gate_labels_priority_gpus_pool_and_scheduler(plan_for, adapter, serializable):
    plan = plan_for(adapter)
    pod, _ = request_pod(plan, serializable=serializable)
    spec, c = pod.spec, pod.spec.containers[0]
    assert pod.metadata.namespace == "team-vision"
    assert pod.metadata.name.startswith("qc-item-000-") and len(pod.metadata.name) == len("qc-item-000") + 9
    assert [g.name for g in spec.scheduling_gates] == ["gpupoc.io/wave-release"]
    labels = pod.metadata.labels
    assert labels["gpupoc.io/run-id"] == safe_label_value(RUN_ID)
    assert labels["gpupoc.io/test-class"] == "queue_congestion"
    assert (labels["gpupoc.io/tenant"], labels["gpupoc.io/workload"], labels["gpupoc.io/task-type"]) == \
        ("team-vision", "v-train-8g", "training")
    assert spec.priority_class_name == "gpupoc-high"
    assert c.resources.limits["nvidia.com/gpu"] == "8" and c.resources.requests["nvidia.com/gpu"] == "8"
    assert c.resources.limits["memory"] == "512Mi"
    assert spec.node_selector == {"gpupoc.io/pool": "training"}
    assert [(t.key, t.operator, t.effect, t.toleration_seconds) for t in spec.tolerations] == [
        ("nvidia.com/gpu", "Exists", "NoSchedule", None), ("node.kubernetes.io/unreachable", "Exists", "NoExecute", 8),
        ("node.kubernetes.io/not-ready", "Exists", "NoExecute", 8)], "the pool's tolerations, seconds included"
    assert spec.restart_policy == "Never" and c.name == "base"
    expected_scheduler = {"volcano": "volcano", "kai": "kai-scheduler"}.get(adapter)
    assert spec.scheduler_name == expected_scheduler
    if adapter == "kueue":
        assert labels["kueue.x-k8s.io/queue-name"] == "training"
    if adapter == "volcano":
        assert pod.metadata.annotations["scheduling.volcano.sh/queue-name"] == "team-vision"
    if adapter == "kai":
        assert labels["kai.scheduler/queue"] == "team-vision"


@pytest.mark.parametrize("serializable", [False, True], ids=["models", "json"])
def test_operator_pod_equals_build_pod_apart_from_name_suffix_and_airflow_labels(plan, serializable):
    pod, _ = request_pod(plan, "train-2g", serializable=serializable)
    got = ApiClient().sanitize_for_serialization(pod)
    want = ApiClient().sanitize_for_serialization(
        build_pod(plan.workload("train-2g"), plan.tenant("team-vision"), plan, run_id=RUN_ID,
                  test_class="queue_congestion", wave_gate=True, name="qc-item-000"))
    assert got["metadata"]["labels"].pop("airflow_version")
    got["metadata"].pop("name"), want["metadata"].pop("name")
    assert got["spec"]["containers"][0]["env"] == want["spec"]["containers"][0]["env"]  # not doubled
    for key in ("metadata",):
        assert got[key] == want[key]
    for key in ("schedulingGates", "nodeSelector", "tolerations", "priorityClassName", "restartPolicy"):
        assert got["spec"][key] == want["spec"][key], key
    for key in ("image", "args", "resources", "env"):
        assert got["spec"]["containers"][0][key] == want["spec"]["containers"][0][key], key


def test_operator_settings_for_a_waiting_wave(plan):
    _, kw = request_pod(plan)
    assert kw["deferrable"] is True and kw["durable"] is True
    assert kw["startup_check_interval_seconds"] == 5 and kw["poll_interval"] == 5
    assert isinstance(kw["poll_interval"], int) and isinstance(kw["startup_timeout_seconds"], int)
    assert kw["get_logs"] is True and kw["do_xcom_push"] is False
    assert kw["on_finish_action"] == "keep_pod"
    assert kw["on_kill_action"] == "keep_pod", "a trigger handed to another triggerer must not delete its pod"
    qc = plan.test_classes.queue_congestion
    assert kw["startup_timeout_seconds"] >= qc.thresholds.max_wait_seconds + qc.gate_timeout_seconds
    _, ungated = request_pod(plan, wave_gate=False)
    assert ungated["startup_timeout_seconds"] < kw["startup_timeout_seconds"]


def test_identity_is_the_tenants_context_in_the_plans_kubeconfig(plan):
    _, kw = request_pod(plan, "v-train-1g", "team-nlp")
    assert kw["cluster_context"] == "team-nlp"
    assert kw["config_file"] == str(plan.kubeconfig_path) and kw["config_file"].endswith("var/sim/kubeconfig")
    assert kw["kubernetes_conn_id"] is None


def test_identity_through_a_connection_or_in_cluster(plan_for):
    from gpupoc.podspec import identity_kwargs

    plan = plan_for("kube-scheduler")
    conn = plan.model_copy(update={"platform": plan.platform.model_copy(
        update={"kubeconfig": None, "kubernetes_conn_id": "poc_cluster"})})
    assert identity_kwargs(conn, plan.tenant("team-nlp")) == {"kubernetes_conn_id": "poc_cluster",
                                                              "cluster_context": "team-nlp"}
    assert identity_kwargs(conn, None)["cluster_context"] == "admin"
    inc = plan.model_copy(update={"platform": plan.platform.model_copy(update={"kubeconfig": None,
                                                                                "in_cluster": True})})
    assert identity_kwargs(inc, plan.tenant("team-nlp")) == {"in_cluster": True, "kubernetes_conn_id": None}


def test_serializable_kwargs_survive_json(plan):
    kw = kpo_kwargs(plan.workload("oom-kill"), plan.tenant("team-vision"), plan, run_id=RUN_ID,
                    test_class="fault_recovery", wave_gate=False, name="fr-oom-kill-002", serializable=True)
    again = json.loads(json.dumps(kw))
    pod = KubernetesPodOperator(task_id="t", **again).build_pod_request_obj(dry_run=True)
    assert pod.spec.containers[0].resources.limits == {"memory": "256Mi", "nvidia.com/gpu": "1"}
    assert pod.spec.scheduling_gates is None
    assert pod.metadata.annotations["gpupoc.io/expected-exit-code"] == "137"


def test_every_item_of_the_default_plan_builds(plan):
    for tc in ("queue_congestion", "tenant_isolation", "utilization", "fault_recovery", "audit_trail"):
        for item in class_items(plan, tc):
            kw = kpo_kwargs(plan.workload(item.workload), plan.tenant(item.tenant), plan, run_id=RUN_ID,
                            test_class=tc, wave_gate=True, name=item.name, priority_class=item.priority_class,
                            role=item.role)
            assert kw["namespace"] == plan.tenant(item.tenant).namespace
            assert kw["priority_class_name"] in plan.tenant(item.tenant).priority_classes
