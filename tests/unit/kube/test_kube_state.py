"""kube/kube_state: kube-state-metrics series computed from the objects' JSON alone (no cluster), as the
simulated cluster and the real-cluster exporter both serve them."""

from __future__ import annotations

import pytest

from gpupoc.kube import kube_state
from tests.exposition import parse_exposition, series

POD = {"metadata": {"name": "train-0", "namespace": "team-vision", "uid": "u1", "resourceVersion": "7",
                    "creationTimestamp": "2026-11-30T07:00:00Z",
                    "labels": {"gpupoc.io/tenant": "vision", "gpupoc.io/task-type": "training", "other": "x"}},
       "spec": {"nodeName": "training-node-1", "containers": [
           {"name": "main", "resources": {"requests": {"nvidia.com/gpu": "2"}}}]},
       "status": {"phase": "Running", "startTime": "2026-11-30T07:00:05.123456789Z",
                  "containerStatuses": [{"name": "main", "restartCount": 0,
                                         "state": {"running": {"startedAt": "2026-11-30T07:00:05Z"}}}]}}
NODE = {"metadata": {"name": "training-node-1", "labels": {"gpupoc.io/pool": "training",
                                                          "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}},
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        "status": {"capacity": {"nvidia.com/gpu": "8", "cpu": "96"}, "allocatable": {"nvidia.com/gpu": "8"},
                   "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                   "conditions": [{"type": "Ready", "status": "True"}]}}


def render(pods=(POD,), nodes=(NODE,), quotas=(), cache=None):
    samples, _, _ = parse_exposition(kube_state.render_kube_state(list(pods), list(nodes), list(quotas), cache))
    return samples


def test_a_pod_on_a_node_gets_its_phase_labels_and_gpu_request():
    samples = render()
    assert {l["phase"]: v for l, v in series(samples, "kube_pod_status_phase", pod="train-0")}["Running"] == 1
    (labels, _), = series(samples, "kube_pod_labels", pod="train-0")
    assert labels["label_gpupoc_io_tenant"] == "vision" and "label_other" not in labels
    (req, gpus), = series(samples, "kube_pod_container_resource_requests", pod="train-0")
    assert (req["node"], req["resource"], gpus) == ("training-node-1", "nvidia_com_gpu", 2)
    (info, _), = series(samples, "kube_pod_info", pod="train-0")
    assert info["host_ip"] == "10.0.0.1"


def test_nanosecond_timestamps_are_read_as_kubernetes_writes_them():
    (_, start), = series(render(), "kube_pod_start_time", pod="train-0")
    assert start == pytest.approx(1796022005.123456)


def test_a_node_gets_its_gpu_capacity_pool_label_taint_and_condition():
    samples = render()
    assert series(samples, "kube_node_status_capacity", node="training-node-1", resource="nvidia_com_gpu")[0][1] == 8
    assert series(samples, "kube_node_labels", node="training-node-1")[0][0]["label_gpupoc_io_pool"] == "training"
    assert series(samples, "kube_node_spec_taint", key="nvidia.com/gpu", effect="NoSchedule")[0][1] == 1
    assert series(samples, "kube_node_status_condition", condition="Ready", status="true")[0][1] == 1


def test_a_quota_gives_hard_and_used_rows():
    rq = {"metadata": {"name": "gpu", "namespace": "team-vision"},
          "status": {"hard": {"requests.nvidia.com/gpu": "8"}, "used": {"requests.nvidia.com/gpu": "3"}}}
    rows = {l["type"]: v for l, v in series(render(quotas=[rq]), "kube_resourcequota", resourcequota="gpu")}
    assert rows == {"hard": 8, "used": 3}


def test_the_cache_follows_the_pods_of_the_last_call():
    cache: dict = {}
    render(cache=cache)
    assert list(cache) == [("team-vision", "train-0")]
    moved = {**POD, "metadata": {**POD["metadata"], "resourceVersion": "8"}, "status": {"phase": "Succeeded"}}
    samples = render(pods=[moved], cache=cache)
    assert {l["phase"]: v for l, v in series(samples, "kube_pod_status_phase", pod="train-0")}["Succeeded"] == 1
    render(pods=[], cache=cache)
    assert cache == {}


@pytest.mark.parametrize("q,expected", [("8", 8), ("500m", 0.5), ("2048Gi", 2048 * 2**30), ("1k", 1000),
                                        (3, 3), ("1e3", 1000)])
def test_parse_quantity(q, expected):
    assert kube_state.parse_quantity(q) == expected


def test_parse_quantity_rejects_garbage_with_the_value():
    with pytest.raises(ValueError, match="'12 gpus'"):
        kube_state.parse_quantity("12 gpus")
