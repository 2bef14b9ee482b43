"""DRA mode's nodes and objects, the claim builders, and reading a claim's allocation."""

from __future__ import annotations

from types import SimpleNamespace

from gpupoc.controlplane import dra
from gpupoc.controlplane.dra_slices import SHARED_CLASS

POOL = SimpleNamespace(name="p", nodes=2, node_names=[], gpus_per_node=2, gpu_model="NVIDIA L40S")


def test_dra_nodes_drop_the_device_plugins_gpu_and_keep_the_rest():
    node = {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4", "nvidia.com/gpu": "8"},
                                                  "allocatable": {"cpu": "4", "nvidia.com/gpu": "8"}}}
    (out,) = dra.dra_nodes([node])
    assert out["status"]["capacity"] == {"cpu": "4"} and out["status"]["allocatable"] == {"cpu": "4"}
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "8", "the input is left alone"


def test_dra_objects_are_the_classes_then_every_pool_nodes_slices():
    objs = dra.dra_objects([POOL], {"p-node-1": "uid-1"})
    kinds = [o["kind"] for o in objs]
    assert kinds[:3] == ["DeviceClass"] * 3 and set(kinds[3:]) == {"ResourceSlice"}
    nodes = {o["spec"]["nodeName"] for o in objs[3:]}
    assert nodes == {"p-node-1", "p-node-2"}
    owned = {o["spec"]["nodeName"] for o in objs[3:] if o["metadata"].get("ownerReferences")}
    assert owned == {"p-node-1"}


def test_a_shared_card_template_asks_its_memory_as_capacity():
    t = dra.claim_template("s", "ns", SHARED_CLASS, memory="20Gi", selector="true")
    (req,) = t["spec"]["spec"]["devices"]["requests"]
    assert req["exactly"]["capacity"] == {"requests": {"memory": "20Gi"}}
    assert req["exactly"]["deviceClassName"] == SHARED_CLASS and req["exactly"]["selectors"][0]["cel"]


def test_a_claim_pod_uses_its_claim_tolerates_the_gpu_taints_and_can_be_pinned():
    pod = dra.claim_pod("a", "ns", "t", node="n1")
    spec = pod["spec"]
    assert spec["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "t"}]
    assert spec["containers"][0]["resources"]["claims"] == [{"name": "gpu"}]
    assert {t["key"] for t in spec["tolerations"]} == {"kwok.x-k8s.io/node", "nvidia.com/gpu"}
    assert spec["nodeSelector"] == {"kubernetes.io/hostname": "n1"}
    assert "nodeSelector" not in dra.claim_pod("a", "ns", "t")["spec"]


def test_allocated_devices_reads_the_drivers_results_only():
    claim = {"metadata": {"name": "c"}, "status": {"allocation": {"devices": {"results": [
        {"driver": "gpu.gpupoc.io", "pool": "n1", "device": "gpu-0-shared", "request": "gpu",
         "consumedCapacity": {"memory": "20Gi"}},
        {"driver": "other.example.com", "pool": "n1", "device": "x", "request": "gpu"}]}}}}
    assert dra.allocated_devices(claim) == [dra.AllocatedDevice("c", "n1", "gpu-0-shared", {"memory": "20Gi"})]
    assert dra.allocated_devices({"metadata": {"name": "c"}, "status": {}}) == []

