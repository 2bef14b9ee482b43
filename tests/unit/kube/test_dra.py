"""Whole cards and allocations read from DRA objects."""

from gpupoc.controlplane.dra_slices import DRIVER, node_slices
from gpupoc.kube.dra import allocations, cards_per_node, device_type, drivers, whole_cards


def test_only_whole_cards_count_not_their_partitions_or_shared_devices():
    slices = node_slices("training-node-1", 8, "NVIDIA H100 80GB HBM3") + node_slices("inference-node-1", 4,
                                                                                       "NVIDIA L40S")
    assert cards_per_node(slices) == {"training-node-1": 8, "inference-node-1": 4}
    assert [c.index for c in whole_cards(slices) if c.node == "training-node-1"] == list(range(8))
    assert drivers(slices) == [DRIVER]


def test_a_pool_counts_only_its_newest_generation_and_a_device_once():
    old = node_slices("n1", 8, "NVIDIA H100 80GB HBM3")
    new = node_slices("n1", 4, "NVIDIA H100 80GB HBM3")
    for s in new:
        s["spec"]["pool"]["generation"] = 2
        s["metadata"]["name"] += "-g2"
    assert cards_per_node(old + new) == {"n1": 4}
    assert cards_per_node(old + old) == {"n1": 8}


def test_a_qualified_type_attribute_is_read_and_a_device_without_one_is_no_card():
    assert device_type({"attributes": {"gpu.nvidia.com/type": {"string": "gpu"}}}) == "gpu"
    assert device_type({"attributes": {"productName": {"string": "x"}}}) == ""
    assert cards_per_node([{"spec": {"driver": "d", "nodeName": "n", "pool": {"name": "n", "generation": 1},
                                     "devices": [{"name": "x", "attributes": {}}]}}]) == {}


def test_allocations_name_each_device_what_it_consumed_and_the_pods_reserved():
    claim = {"metadata": {"namespace": "team-vision", "name": "c1"},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "gpu", "driver": DRIVER, "pool": "training-node-1", "device": "gpu-0-shared",
                  "consumedCapacity": {"memory": "20Gi"}}]}},
                 "reservedFor": [{"resource": "pods", "name": "p1", "uid": "u"}]}}
    [a] = allocations([claim, {"metadata": {"name": "pending"}}])
    assert (a.namespace, a.claim, a.pool, a.device, a.consumed, a.pods) == \
        ("team-vision", "c1", "training-node-1", "gpu-0-shared", {"memory": "20Gi"}, ("p1",))
