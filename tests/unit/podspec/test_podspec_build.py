"""build_pod: one pure function from plan, workload and tenant to a typed pod; adapters decorate it."""

from __future__ import annotations

import pytest
from kubernetes.client import ApiClient, V1Pod

from gpupoc.podspec import build_pod, safe_label_value

from gpupoc.common.constants import PIPELINE_GATE

RUN_ID = "manual__2026-11-30T07:00:00+00:00"


def build(plan, workload="v-train-8g", tenant="team-vision", **kw):
    kw.setdefault("run_id", RUN_ID)
    kw.setdefault("test_class", "queue_congestion")
    kw.setdefault("wave_gate", True)
    return build_pod(plan.workload(workload), plan.tenant(tenant), plan, **kw)


def as_json(pod: V1Pod) -> dict:
    return ApiClient().sanitize_for_serialization(pod)


def test_pod_carries_pool_priority_gpus_gate_and_evidence_labels(plan):
    pod = build(plan, name="qc-v-train-8g-000")
    assert isinstance(pod, V1Pod)
    assert pod.metadata.namespace == "team-vision" and pod.metadata.name == "qc-v-train-8g-000"
    spec = pod.spec
    assert spec.priority_class_name == "gpupoc-high"
    assert spec.node_selector == {"gpupoc.io/pool": "training"}
    assert [(t.key, t.operator, t.effect, t.toleration_seconds) for t in spec.tolerations] == [
        ("nvidia.com/gpu", "Exists", "NoSchedule", None), ("node.kubernetes.io/unreachable", "Exists", "NoExecute", 8),
        ("node.kubernetes.io/not-ready", "Exists", "NoExecute", 8)], "the pool's tolerations, seconds included"
    assert [g.name for g in spec.scheduling_gates] == [PIPELINE_GATE] == ["gpupoc.io/wave-release"]
    assert spec.restart_policy == "Never" and spec.scheduler_name is None
    c = spec.containers[0]
    assert c.name == "base" and c.image == "gpupoc/virtual:1.0"
    assert c.resources.limits == {"memory": "512Mi", "nvidia.com/gpu": "8"}
    assert c.resources.requests == {"cpu": "500m", "memory": "256Mi", "nvidia.com/gpu": "8"}
    labels = pod.metadata.labels
    assert labels["gpupoc.io/run-id"] == safe_label_value(RUN_ID)
    assert labels["gpupoc.io/test-class"] == "queue_congestion"
    assert labels["gpupoc.io/tenant"] == "team-vision"
    assert labels["gpupoc.io/workload"] == "v-train-8g"
    assert labels["gpupoc.io/task-type"] == "training"
    assert pod.metadata.annotations["gpupoc.io/run-id-raw"] == RUN_ID


def test_without_wave_gate_there_are_no_scheduling_gates(plan):
    assert build(plan, wave_gate=False).spec.scheduling_gates is None
    assert "schedulingGates" not in as_json(build(plan, wave_gate=False))["spec"]


def test_env_carries_catalogue_fields_and_the_plans_env_wins(plan):
    env = {e.name: e.value for e in build(plan, "fail-exit").spec.containers[0].env}
    assert env["WORKLOAD_DURATION_SECONDS"] == "5" and env["WORKLOAD_EXIT_CODE"] == "3"
    assert env["GPUPOC_TENANT"] == "team-vision" and env["GPUPOC_RUN_ID"] == RUN_ID
    hang = {e.name for e in build(plan, "hang", tenant="team-nlp").spec.containers[0].env}
    assert "WORKLOAD_EXIT_CODE" not in hang  # a hang never ends by itself
    w = plan.workload("v-train-1g").model_copy(update={"env": {"WORKLOAD_DURATION_SECONDS": "99"}})
    pod = build_pod(w, plan.tenant("team-nlp"), plan, run_id="r", test_class="utilization", wave_gate=False)
    assert {e.name: e.value for e in pod.spec.containers[0].env}["WORKLOAD_DURATION_SECONDS"] == "99"


def test_process_workload_keeps_args_and_command(plan):
    c = build(plan, "train-2g").spec.containers[0]
    assert c.args == ["--mode", "train", "--duration", "60"] and c.command is None
    assert build(plan, "missing-image", tenant="team-nlp").spec.containers[0].image == \
        "registry.invalid/team-nlp/does-not-exist:1.0"


def test_priority_class_override_from_the_wave(plan):
    pod = build(plan, "v-train-2g", tenant="team-nlp", priority_class="gpupoc-high")
    assert pod.spec.priority_class_name == "gpupoc-high"
    assert pod.metadata.labels["gpupoc.io/priority-class"] == "gpupoc-high"


def test_build_is_pure(plan):
    a, b = as_json(build(plan, name="x")), as_json(build(plan, name="x"))
    assert a == b


def test_every_label_value_is_valid(plan):
    from gpupoc.podspec.labels import is_valid_label_value

    for run_id in (RUN_ID, "scheduled__2026-12-01T00:00:00+00:00", "x" * 120, "__weird__:run"):
        pod = build(plan, run_id=run_id, role="injection:node_failure")
        for k, v in pod.metadata.labels.items():
            assert is_valid_label_value(v), (k, v)


@pytest.mark.parametrize("adapter, scheduler", [("kube-scheduler", None), ("kueue", None),
                                                ("volcano", "volcano"), ("kai", "kai-scheduler")])
def test_adapter_scheduler_names(plan_for, adapter, scheduler):
    assert build(plan_for(adapter)).spec.scheduler_name == scheduler


def test_kueue_adds_queue_label_and_optional_priority_label(plan_for):
    pod = build(plan_for("kueue"), "v-infer-4g", tenant="team-serving")
    assert pod.metadata.labels["kueue.x-k8s.io/queue-name"] == "inference"
    assert "kueue.x-k8s.io/priority-class" not in pod.metadata.labels
    pod = build(plan_for("kueue", kueue_priority_label=True), "v-train-4g", tenant="team-nlp")
    assert pod.metadata.labels["kueue.x-k8s.io/queue-name"] == "training"
    assert pod.metadata.labels["kueue.x-k8s.io/priority-class"] == "gpupoc-high"


def test_volcano_and_kai_queue_markers(plan_for):
    v = build(plan_for("volcano"), tenant="team-vision")
    assert v.metadata.annotations["scheduling.volcano.sh/queue-name"] == "team-vision"
    assert v.spec.priority_class_name == "gpupoc-high"
    k = build(plan_for("kai"), "v-train-1g", tenant="team-nlp")
    assert k.metadata.labels["kai.scheduler/queue"] == "team-nlp"
    assert "kueue.x-k8s.io/queue-name" not in k.metadata.labels


def test_scheduler_name_override(plan_for):
    assert build(plan_for("volcano", scheduler_name="volcano-gpu")).spec.scheduler_name == "volcano-gpu"
