"""The Kueue scenario's pods and names: a queued pod asks GPUs only (or CPU when told) and carries the queue
label; Workload names read ``<workload>`` before the rest of a message is normalised."""

from __future__ import annotations

from gpupoc.fidelity.kueue_setup import QUEUE_LABEL, kshape, queued_pod


def test_a_queued_pod_asks_gpus_only_and_names_its_queue():
    body = queued_pod("p", "lq", 4, priority="fid-high")
    resources = body["spec"]["containers"][0]["resources"]
    assert resources == {"requests": {"nvidia.com/gpu": "4"}, "limits": {"nvidia.com/gpu": "4"}}
    assert body["metadata"]["labels"][QUEUE_LABEL] == "lq"
    assert "nodeSelector" not in body["spec"] and body["spec"]["priorityClassName"] == "fid-high"


def test_a_queued_pod_asks_cpu_when_told():
    resources = queued_pod("p", "lq", 0, cpu="100m")["spec"]["containers"][0]["resources"]
    assert resources["requests"] == {"cpu": "100m"}


def test_workload_names_are_replaced_before_digits():
    text = "Created Workload: team-nlp/pod-fid-a-1b2c3 and pod-fid-a-1b2c3-x on gpu-node-1"
    assert kshape(text, ["pod-fid-a-1b2c3"], ["gpu-node-1"]) == (
        "Created Workload: team-nlp/<workload> and <workload>-x on <node>")
    assert kshape(None, [], []) is None
