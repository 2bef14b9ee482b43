"""sim/kube_state.render_kube_state: kube-state-metrics series for pods, nodes and quotas."""

from __future__ import annotations

from datetime import datetime, timezone

from gpupoc.sim import kube_state

T0 = "2026-11-30T07:00:00Z"
T0_UNIX = datetime(2026, 11, 30, 7, tzinfo=timezone.utc).timestamp()


def _pod(state, name, ns="team-vision", phase="Running", node="training-node-1", gpus=2, labels=None,
         container_state=None, restarts=0, last_state=None, extra_status=None):
    obj = {
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": T0, "labels": labels or {}},
        "spec": {"nodeName": node, "priorityClassName": "gpupoc-high", "containers": [
            {"name": "main", "image": "gpupoc/virtual:1",
             "resources": {"limits": {"nvidia.com/gpu": str(gpus)}, "requests": {"nvidia.com/gpu": str(gpus)}}}]},
        "status": {"phase": phase, "startTime": "2026-11-30T07:00:05Z",
                   "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-30T07:00:02Z"}],
                   "containerStatuses": [{"name": "main", "restartCount": restarts,
                                          "state": container_state or {"running": {"startedAt": T0}},
                                          "lastState": last_state or {}}],
                   **(extra_status or {})},
    }
    return state.store.create("pods", obj)


def _render(state, expo):
    samples, helps, types = expo.parse(kube_state.render_kube_state(state))
    return samples, helps, types


def test_phase_has_one_series_per_phase_with_the_current_one_set(state, expo):
    pod = _pod(state, "train-0")
    samples, _, _ = _render(state, expo)
    rows = {labels["phase"]: v for labels, v in expo.series(samples, "kube_pod_status_phase", pod="train-0")}
    assert rows == {"Pending": 0, "Succeeded": 0, "Failed": 0, "Unknown": 0, "Running": 1}
    labels = expo.series(samples, "kube_pod_status_phase", pod="train-0")[0][0]
    assert list(labels) == ["namespace", "pod", "uid", "phase"]
    assert labels["uid"] == pod["metadata"]["uid"]


def test_waiting_reason_and_gpu_request_of_a_pod_stuck_on_its_image(state, expo):
    _pod(state, "pull-0", phase="Pending", gpus=4,
         container_state={"waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "x"'}})
    samples, _, _ = _render(state, expo)
    (labels, v), = expo.series(samples, "kube_pod_container_status_waiting_reason", pod="pull-0")
    assert v == 1 and labels["reason"] == "ImagePullBackOff" and labels["container"] == "main"
    (labels, v), = expo.series(samples, "kube_pod_container_resource_requests", pod="pull-0")
    assert v == 4
    assert list(labels) == ["namespace", "pod", "uid", "container", "node", "resource", "unit"]
    assert (labels["resource"], labels["unit"], labels["node"]) == ("nvidia_com_gpu", "integer", "training-node-1")
    assert not expo.series(samples, "kube_pod_container_status_terminated_reason", pod="pull-0")


def test_terminated_pod_reports_reason_restarts_and_completion_time(state, expo):
    _pod(state, "oom-0", phase="Failed", restarts=2,
         container_state={"terminated": {"reason": "OOMKilled", "exitCode": 137,
                                         "finishedAt": "2026-11-30T07:01:00Z"}},
         last_state={"terminated": {"reason": "Error", "exitCode": 1}}, extra_status={"reason": "NodeLost"})
    samples, _, types = _render(state, expo)
    assert expo.series(samples, "kube_pod_container_status_terminated_reason", pod="oom-0")[0][0]["reason"] == "OOMKilled"
    assert expo.series(samples, "kube_pod_container_status_last_terminated_reason", pod="oom-0")[0][0]["reason"] == "Error"
    assert expo.series(samples, "kube_pod_container_status_restarts_total", pod="oom-0")[0][1] == 2
    assert types["kube_pod_container_status_restarts_total"] == "counter"
    assert expo.series(samples, "kube_pod_completion_time", pod="oom-0")[0][1] == T0_UNIX + 60
    assert expo.series(samples, "kube_pod_status_reason", pod="oom-0")[0][0]["reason"] == "NodeLost"
    assert expo.series(samples, "kube_pod_status_phase", pod="oom-0", phase="Failed")[0][1] == 1


def test_pod_timestamps_info_and_allowlisted_labels(state, expo):
    _pod(state, "train-1", labels={"gpupoc.io/tenant": "team-vision", "gpupoc.io/task-type": "training",
                                   "kueue.x-k8s.io/queue-name": "training", "secret-ish": "no"})
    samples, _, _ = _render(state, expo)
    assert expo.series(samples, "kube_pod_created", pod="train-1")[0][1] == T0_UNIX
    assert expo.series(samples, "kube_pod_status_scheduled_time", pod="train-1")[0][1] == T0_UNIX + 2
    assert expo.series(samples, "kube_pod_start_time", pod="train-1")[0][1] == T0_UNIX + 5
    assert not expo.series(samples, "kube_pod_completion_time", pod="train-1")
    (labels, _), = expo.series(samples, "kube_pod_labels", pod="train-1")
    assert labels["label_gpupoc_io_task_type"] == "training"
    assert labels["label_gpupoc_io_tenant"] == "team-vision"
    assert labels["label_kueue_x_k8s_io_queue_name"] == "training"
    assert not any("secret" in k for k in labels)
    (info, _), = expo.series(samples, "kube_pod_info", pod="train-1")
    assert info["node"] == "training-node-1" and info["priority_class"] == "gpupoc-high"
    assert info["host_ip"].startswith("192.0.2.")


def test_node_conditions_follow_the_node_object(state, expo):
    node = state.store.get("nodes", None, "training-node-2")
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    ready.update(status="Unknown", reason="NodeStatusUnknown")
    node["spec"]["unschedulable"] = True
    state.store.update("nodes", node)
    samples, _, _ = _render(state, expo)
    rows = {l["status"]: v for l, v in expo.series(samples, "kube_node_status_condition",
                                                   node="training-node-2", condition="Ready")}
    assert rows == {"true": 0, "false": 0, "unknown": 1}
    assert expo.series(samples, "kube_node_status_condition", node="training-node-1", condition="Ready",
                       status="true")[0][1] == 1
    assert expo.series(samples, "kube_node_spec_unschedulable", node="training-node-2")[0][1] == 1
    assert expo.series(samples, "kube_node_spec_unschedulable", node="training-node-1")[0][1] == 0
    assert expo.series(samples, "kube_node_status_capacity", node="training-node-2", resource="nvidia_com_gpu")[0][1] == 8
    assert expo.series(samples, "kube_node_status_capacity", node="training-node-2", resource="memory")[0][1] == 2048 * 2**30
    assert expo.series(samples, "kube_node_labels", node="inference-node-1")[0][0]["label_gpupoc_io_pool"] == "inference"
    taint = expo.series(samples, "kube_node_spec_taint", node="training-node-2")[0][0]
    assert (taint["key"], taint["effect"]) == ("nvidia.com/gpu", "NoSchedule")


def test_resourcequota_hard_and_used(state, expo):
    rq = state.store.get("resourcequotas", "team-nlp", "team-nlp-gpu")
    hard = int(rq["spec"]["hard"]["requests.nvidia.com/gpu"])
    rq["status"]["used"]["requests.nvidia.com/gpu"] = "11"
    state.store.update("resourcequotas", rq)
    samples, _, _ = _render(state, expo)
    rows = {l["type"]: v for l, v in expo.series(samples, "kube_resourcequota", namespace="team-nlp",
                                                 resource="requests.nvidia.com/gpu")}
    assert rows == {"hard": hard, "used": 11}
    assert list(expo.series(samples, "kube_resourcequota", namespace="team-nlp")[0][0]) == \
        ["namespace", "resourcequota", "resource", "type"]


def test_rendering_follows_pod_updates_and_deletions_between_scrapes(state, expo):
    pod = _pod(state, "train-2")
    samples, _, _ = _render(state, expo)
    assert expo.series(samples, "kube_pod_status_phase", pod="train-2", phase="Running")[0][1] == 1
    pod["status"]["phase"] = "Succeeded"
    state.store.update("pods", pod)
    samples, _, _ = _render(state, expo)
    assert expo.series(samples, "kube_pod_status_phase", pod="train-2", phase="Running")[0][1] == 0
    assert expo.series(samples, "kube_pod_status_phase", pod="train-2", phase="Succeeded")[0][1] == 1
    state.store.delete("pods", "team-vision", "train-2")
    samples, _, _ = _render(state, expo)
    assert not expo.series(samples, "kube_pod_status_phase", pod="train-2")
