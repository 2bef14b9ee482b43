"""How the cluster shares its GPUs, as its nodes say, and the finding where nothing isolates a card's memory."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpupoc.evidence.subject import GPU_SHARING, gpu_sharing, sharing_of
from gpupoc.report.subject import sharing_findings
from gpupoc.report.wording import strings
from gpupoc.sim.bootstrap import bootstrap
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import CLUSTERS_DIR, load_cluster_config

EN, ZH = strings("en"), strings("zh")


def say(key: str, **values) -> str:
    return EN[key].format(**values)


def run_with(value: str | None):
    return SimpleNamespace(manifest={"platform": {} if value is None else {GPU_SHARING: value}})


@pytest.mark.parametrize("config, expected", [("time-slicing", "none=3,time-slicing=2"), ("mig", "mig=3,none=2"),
                                              ("hami", "hami=5")])
def test_the_simulated_nodes_say_how_they_share(tmp_path, config, expected):
    state = ClusterState(load_cluster_config(CLUSTERS_DIR / f"{config}.yaml"), tmp_path)
    bootstrap(state)
    assert gpu_sharing(state.store.list("nodes")) == expected


def test_sharing_of_reads_the_device_plugins_labels():
    assert sharing_of({"metadata": {"labels": {"nvidia.com/gpu.sharing-strategy": "mps"}}}) == "mps"
    assert sharing_of({"metadata": {"labels": {"nvidia.com/mig.strategy": "mixed"}}}) == "mig"
    assert sharing_of({"metadata": {}}) == "none"


def test_time_slicing_is_a_no_memory_isolation_finding_and_mig_or_hami_are_not():
    found = sharing_findings([run_with("none=3,time-slicing=2"), run_with("time-slicing=1"), run_with(None)], say)
    assert [(f.item, f.target.value) for f in found] == [("shared_gpus", "second_verification")]
    assert found[0].text.startswith("no memory isolation: 2 node(s) share their GPUs by time-slicing")
    assert sharing_findings([run_with("mig=3,none=2"), run_with("hami=5"), run_with("garbage")], say) == []


def test_the_finding_is_worded_in_both_languages():
    assert {"finding.no_memory_isolation", "item.shared_gpus"} <= set(EN) & set(ZH)
    assert "{strategy}" in ZH["finding.no_memory_isolation"] and "{nodes}" in ZH["finding.no_memory_isolation"]


def memory_run(tmp_path, name: str, **row):
    import pandas as pd

    from gpupoc.evidence.reader import RunEvidence
    from gpupoc.validation import synthetic as syn

    tables = syn.good_tables("tenant_isolation")
    tables["memory_isolation"] = pd.DataFrame([row])
    return RunEvidence.open(syn.write_run(tmp_path / name, "tenant_isolation", "r1", tables))


UNISOLATED = dict(sharing="hami", shared_gpu=True, isolated=False, gpu_uuid="GPU-7a55", node="inference-node-1",
                  aggressor_tenant="team-nlp", neighbour_tenant="team-vision", slice_mib=11517,
                  aggressor_peak_mib=40436.0, aggressor_failed=False, neighbour_unaffected=False)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_probe_that_found_no_memory_isolation_is_a_p1_finding_for_the_contract(tmp_path, language):
    from gpupoc.report.subject import memory_isolation_findings
    from gpupoc.report.wording import Wording

    words = Wording(language)
    found = memory_isolation_findings([memory_run(tmp_path, "a", **UNISOLATED)], words.t)
    assert [(f.item, f.target.value, f.failure_class.value) for f in found] == [
        ("shared_gpus", "contract", "product_gap")]
    assert found[0].text.startswith("P1 ") and "GPU-7a55" in found[0].text and "40436" in found[0].text
    if language == "en":
        assert "no GPU memory isolation between tenants" in found[0].text and "kept running" in found[0].text


def test_an_isolated_card_or_a_cluster_without_sharing_raises_no_memory_finding(tmp_path):
    from gpupoc.report.subject import memory_isolation_findings

    runs = [memory_run(tmp_path, "a", **{**UNISOLATED, "isolated": True}),
            memory_run(tmp_path, "b", sharing="none", shared_gpu=False, isolated=None)]
    assert memory_isolation_findings(runs, say) == []
