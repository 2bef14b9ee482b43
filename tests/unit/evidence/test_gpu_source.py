"""The run records how its GPUs reached the scheduler, from what the cluster published."""

from gpupoc.controlplane.dra import dra_nodes
from gpupoc.controlplane.dra_slices import DRIVER, node_slices
from gpupoc.evidence.gpu_source import gpu_source_rows, nodes_with_dra_gpus
from gpupoc.kube.dra import RESOURCE_SLICES


def _node(name, gpus=None):
    alloc = {"cpu": "64"} | ({"nvidia.com/gpu": str(gpus)} if gpus is not None else {})
    return {"metadata": {"name": name}, "status": {"allocatable": alloc, "capacity": dict(alloc)}}


def test_published_whole_cards_are_recorded_as_dra_with_the_driver_and_count():
    slices = node_slices("n1", 8, "NVIDIA H100 80GB HBM3") + node_slices("n2", 4, "NVIDIA L40S")
    rows = {r["key"]: (r["value"], r["source"]) for r in gpu_source_rows(slices, "dra")}
    assert rows == {"gpus.allocation": ("dra", RESOURCE_SLICES), "gpus.dra.drivers": (DRIVER, RESOURCE_SLICES),
                    "gpus.dra.whole_cards": ("12", RESOURCE_SLICES)}


def test_no_slice_is_a_device_plugin_cluster_whatever_the_plan_says():
    [row] = gpu_source_rows([], "dra")
    assert row["key"] == "gpus.allocation" and row["value"] == "device-plugin"
    assert "no whole-card DRA device" in row["source"]


def test_unlistable_slices_leave_the_plans_word_and_say_so():
    [row] = gpu_source_rows(None, "dra")
    assert row["value"] == "dra" and row["source"].startswith("plan (") and RESOURCE_SLICES in row["source"]


def test_dra_nodes_are_recorded_with_their_cards_as_allocatable_and_marked():
    nodes = dra_nodes([_node("n1", 8), _node("n2", 4)]) + [_node("n3", 2)]
    slices = node_slices("n1", 8, "NVIDIA H100 80GB HBM3")
    out = nodes_with_dra_gpus(nodes, slices)
    assert out[0]["status"]["allocatable"] == {"cpu": "64", "nvidia.com/gpu": "8"} and out[0]["gpus_from"] == "dra"
    assert "nvidia.com/gpu" not in out[1]["status"]["allocatable"] and "gpus_from" not in out[1]
    assert out[2] is nodes[2]
    assert "nvidia.com/gpu" not in nodes[0]["status"]["allocatable"], "the listed node is left as the API gave it"
