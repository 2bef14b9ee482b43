"""The memory-isolation probe's pure parts: the pods it submits, what their logs say, and the verdict."""

from __future__ import annotations

import pytest

from gpupoc.classes.tenant_isolation import memory_judge as M

CARD = "GPU-7a55"
SIZES = M.sizes(46068, "hami")
HAMI_LINE = "[HAMI-core ERROR (pid:42 thread=1 allocator.c:60)]: Device 0 OOM 12079595520 / 12076187648"


def log(uuid=CARD, holding=None, oom_held=None, hami=False, total=11517) -> str:
    lines = [f"device 0 {uuid}: {total} MiB total, {total} MiB free; allocating 5632 MiB in 256 MiB steps"]
    if hami:
        lines.append(HAMI_LINE)
    if oom_held is not None:
        lines.append(f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total "
                     f"capacity of {total} MiB of which 0 MiB is free. This process has {oom_held} MiB memory in use. "
                     "(CUDA_ERROR_OUT_OF_MEMORY)")
    if holding is not None:
        lines.append(f"holding {holding} MiB for 420 s")
    return "\n".join(lines)


def view(tenant, name, asked, phase, text, code=None) -> M.PodView:
    return M.PodView(tenant, name, asked, phase, code, M.read_report(text))


def observed(aggressor: M.PodView, late: M.PodView, after_phase="Running", util=(40.0, 40.0)) -> M.Observed:
    n = view("team-vision", "n", SIZES.neighbour_mib, "Running", log(holding=SIZES.neighbour_mib))
    after = view("team-vision", "n", SIZES.neighbour_mib, after_phase,
                 log(holding=SIZES.neighbour_mib) if after_phase == "Running" else log(oom_held=0), None)
    return M.Observed("hami", "inference-node-1", 46068, SIZES, n, after, aggressor, late, *util)


ISOLATED_AGGRESSOR = view("team-nlp", "a", SIZES.aggressor_mib, "Failed", log(oom_held=11264, hami=True), 1)
LATE_OK = view("team-vision", "l", SIZES.late_mib, "Running", log(holding=SIZES.late_mib))
LATE_OOM = view("team-vision", "l", SIZES.late_mib, "Failed", log(oom_held=0, total=46068), 1)


def test_sizes_give_a_quarter_card_slice_and_ask_the_aggressor_for_the_rest_of_the_card():
    assert SIZES == M.Sizes(slice_mib=11517, neighbour_mib=5632, late_mib=2816, aggressor_mib=46068 - 5632)
    assert M.sizes(46068, "time-slicing", replicas=4).slice_mib == 11517
    assert M.sizes(46068, "time-slicing", replicas=8).slice_mib == 5758


def test_the_probe_pod_runs_the_gpumem_mode_on_one_hami_slice_pinned_to_the_card():
    body = {"metadata": {"name": "p", "annotations": {}}, "spec": {"containers": [
        {"name": "main", "args": ["--mode", "infer"], "resources": {"requests": {"nvidia.com/gpu": "2"},
                                                                    "limits": {"nvidia.com/gpu": "2"}}}]}}
    pod = M.gpumem_pod(body, mib=40436, duration_s=420, slice_mib=11517, sharing="hami", node="n1", uuid=CARD)
    c = pod["spec"]["containers"][0]
    assert c["args"] == ["--mode", "gpumem", "--gpu-mem-mib", "40436", "--duration", "420"]
    assert c["resources"]["limits"] == {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "11517"}
    assert c["resources"]["requests"] == {"nvidia.com/gpu": "1"}
    assert pod["metadata"]["annotations"]["nvidia.com/use-gpuuuid"] == CARD
    assert pod["spec"]["nodeSelector"]["kubernetes.io/hostname"] == "n1"
    assert body["spec"]["containers"][0]["args"] == ["--mode", "infer"]  # the plan's pod is left alone
    plain = M.gpumem_pod(body, mib=1, duration_s=1, slice_mib=1, sharing="time-slicing", node="n1", uuid=CARD)
    assert "nvidia.com/gpumem" not in plain["spec"]["containers"][0]["resources"]["limits"]
    assert "nvidia.com/use-gpuuuid" not in plain["metadata"]["annotations"]


def test_the_log_names_the_card_the_memory_held_and_hami_cores_oom_line():
    r = M.read_report(log(oom_held=11264, hami=True))
    assert (r.uuid, r.peak_mib, r.hami_oom, r.cuda_oom) == (CARD, 11264, HAMI_LINE, True)
    assert M.read_report(log(holding=5632)).peak_mib == 5632 and M.read_report("").uuid is None


def test_an_aggressor_failing_at_its_slice_beside_an_unharmed_neighbour_is_isolated():
    row = M.judge(observed(ISOLATED_AGGRESSOR, LATE_OK))
    assert (row.isolated, row.aggressor_failed, row.aggressor_held_to_slice, row.neighbour_unaffected) == (
        True, True, True, True)
    assert row.oom_line == HAMI_LINE and row.severity is None and row.finding is None
    assert (row.neighbour_mib_before, row.neighbour_mib_after, row.gpu_uuid) == (5632, 5632, CARD)


def test_a_neighbour_that_runs_out_of_memory_is_a_p1_finding_even_when_the_aggressor_failed():
    row = M.judge(observed(ISOLATED_AGGRESSOR, LATE_OOM))
    assert row.isolated is False and row.neighbour_unaffected is False and row.late_oom is True
    assert row.severity == "P1" and row.finding.startswith("P1: no GPU memory isolation between tenants")
    assert "within its slice was refused (CUDA out of memory)" in row.finding


def test_an_aggressor_that_kept_its_over_allocation_is_no_isolation():
    greedy = view("team-nlp", "a", SIZES.aggressor_mib, "Running", log(holding=SIZES.aggressor_mib, total=46068))
    row = M.judge(observed(greedy, LATE_OOM))
    assert (row.isolated, row.aggressor_failed, row.aggressor_held_to_slice) == (False, False, False)
    assert "allocated 40436 MiB past its 11517 MiB slice and kept running" in row.finding


def test_a_neighbour_whose_utilization_collapsed_is_harmed():
    row = M.judge(observed(ISOLATED_AGGRESSOR, LATE_OK, util=(60.0, 5.0)))
    assert row.isolated is False and "utilization fell from 60 to 5 %" in row.finding


def test_a_neighbour_killed_by_the_aggressor_is_harmed():
    row = M.judge(observed(ISOLATED_AGGRESSOR, LATE_OK, after_phase="Failed"))
    assert row.isolated is False and "the neighbour n is Failed" in row.finding


@pytest.mark.parametrize("aggressor, late, why", [
    (view("team-nlp", "a", 1, "Pending", ""), LATE_OK, "never reported its card"),
    (view("team-nlp", "a", 1, "Running", log(uuid="GPU-other", holding=1)), LATE_OK, "different cards"),
    (view("team-nlp", "a", 1, "Failed", log(), 2), LATE_OK, "without saying how much memory it held"),
])
def test_the_probe_cannot_tell_without_one_card_and_each_pods_report(aggressor, late, why):
    row = M.judge(observed(aggressor, late))
    assert row.isolated is None and why in row.reason and row.severity is None


def test_a_cluster_without_shared_gpus_records_that_the_case_cannot_arise():
    nodes = [{"metadata": {"name": "n1", "labels": {"nvidia.com/gpu.memory": "81559"}}}]
    assert M.shared_nodes(nodes) == [] and M.cluster_sharing(nodes) == "none"
    row = M.not_shared_row("none")
    assert row.shared_gpu is False and row.isolated is None


def test_shared_nodes_put_hami_and_time_slicing_before_mig():
    mig = {"metadata": {"name": "m", "labels": {"nvidia.com/mig.strategy": "single"}}}
    ts = {"metadata": {"name": "t", "labels": {"nvidia.com/gpu.sharing-strategy": "time-slicing"}}}
    hami = {"metadata": {"name": "h", "annotations": {"hami.io/node-nvidia-register": '[{"devmem":46068}]'}}}
    assert [s for _, s in M.shared_nodes([mig, ts, hami])] == ["time-slicing", "hami", "mig"]
    assert M.card_memory_mib(hami) == 46068 and M.card_memory_mib(mig) is None


def test_free_devices_come_from_allocatable_less_what_pods_ask():
    node = {"status": {"allocatable": {"nvidia.com/gpu": "16"}}}
    pod = {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "2"}}},
                                   {"resources": {"requests": {"nvidia.com/gpu": 1}}}, {}]}}
    assert M.allocatable_gpus(node) == 16 and M.gpus_asked(pod) == 3
    assert M.allocatable_gpus({"status": {}}) == 0 and M.gpus_asked({"spec": {}}) == 0
