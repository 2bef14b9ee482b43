"""The ResourceSlices and DeviceClasses a GPU DRA driver would publish for a KWOK node."""

from __future__ import annotations

from gpupoc.controlplane import dra_slices as S


def devices(slices: list[dict]) -> dict[str, dict]:
    return {d["name"]: d for s in slices for d in s["spec"].get("devices", [])}


def test_a_node_is_one_pool_of_counter_and_device_slices_that_count_themselves():
    slices = S.node_slices("n1", 2, "NVIDIA H100 80GB HBM3", node_uid="u-1")
    assert {s["spec"]["pool"]["name"] for s in slices} == {"n1"}
    assert {s["spec"]["pool"]["resourceSliceCount"] for s in slices} == {len(slices)} and len(slices) == 3
    assert all(s["spec"]["nodeName"] == "n1" and s["spec"]["driver"] == S.DRIVER for s in slices)
    assert all(("devices" in s["spec"]) != ("sharedCounters" in s["spec"]) for s in slices), \
        "a slice holds counters or devices, never both (API validation)"
    assert slices[0]["metadata"]["ownerReferences"][0]["uid"] == "u-1"


def test_nine_cards_need_two_counter_slices_of_at_most_eight_sets():
    slices = S.node_slices("n1", 9, "NVIDIA L40S")
    counters = [len(s["spec"]["sharedCounters"]) for s in slices if "sharedCounters" in s["spec"]]
    assert counters == [8, 1]
    assert all(len(s["spec"].get("devices", [])) <= 64 for s in slices)
    assert "ownerReferences" not in slices[0]["metadata"]


def test_a_whole_card_names_its_product_memory_and_takes_its_whole_counter_set():
    d = devices(S.node_slices("n1", 1, "NVIDIA H100 80GB HBM3"))
    gpu = d["gpu-0"]
    assert gpu["attributes"]["type"] == {"string": "gpu"}
    assert gpu["attributes"]["productName"] == {"string": "NVIDIA H100 80GB HBM3"}
    assert gpu["capacity"]["memory"] == {"value": "80Gi"}
    assert gpu["consumesCounters"] == [{"counterSet": "gpu-0-counters", "counters": {
        "compute-slices": {"value": "7"}, "memory-slices": {"value": "8"}, "memory": {"value": "80Gi"}}}]


def test_a_mig_capable_card_offers_partitions_whose_counters_add_up_to_the_card():
    d = devices(S.node_slices("n1", 1, "NVIDIA H100 80GB HBM3"))
    small = [v for k, v in d.items() if "-mig-1g-10gb-" in k]
    large = [v for k, v in d.items() if "-mig-3g-40gb-" in k]
    assert len(small) == 7 and len(large) == 2
    assert small[0]["capacity"]["memory"] == {"value": "10Gi"}
    assert small[0]["attributes"]["parentUUID"] == d["gpu-0"]["attributes"]["uuid"]
    total = sum(int(p["consumesCounters"][0]["counters"]["compute-slices"]["value"]) for p in small)
    assert total == S.COMPUTE_SLICES, "seven 1g partitions fill the card's compute slices"
    assert large[0]["consumesCounters"][0]["counters"]["memory-slices"] == {"value": "4"}


def test_a_card_without_mig_has_no_partitions_but_a_shared_device():
    d = devices(S.node_slices("n1", 1, "NVIDIA L40S"))
    assert set(d) == {"gpu-0", "gpu-0-shared"}
    shared = d["gpu-0-shared"]
    assert shared["allowMultipleAllocations"] is True
    assert shared["capacity"]["memory"]["value"] == "45Gi"
    assert shared["capacity"]["memory"]["requestPolicy"]["default"] == "10Gi"


def test_device_names_are_dns_labels_and_unique():
    names = list(devices(S.node_slices("n1", 2, "NVIDIA H100 80GB HBM3")))
    assert len(names) == len(set(names))
    assert all(n.replace("-", "").isalnum() and n.islower() and len(n) <= 63 for n in names)


def test_an_unknown_model_keeps_its_name_and_has_no_partitions():
    m = S.gpu_model("Acme X1")
    assert (m.product, m.mig, m.memory_gi) == ("Acme X1", False, 0)


def test_the_whole_card_class_serves_nvidia_com_gpu_and_each_class_selects_one_type():
    classes = {c["metadata"]["name"]: c["spec"] for c in S.device_classes()}
    assert classes[S.WHOLE_CLASS]["extendedResourceName"] == "nvidia.com/gpu"
    assert "extendedResourceName" not in classes[S.MIG_CLASS] and "extendedResourceName" not in classes[S.SHARED_CLASS]
    for name, kind in ((S.WHOLE_CLASS, "gpu"), (S.MIG_CLASS, "mig"), (S.SHARED_CLASS, "shared")):
        assert f".type == '{kind}'" in classes[name]["selectors"][0]["cel"]["expression"]
