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
