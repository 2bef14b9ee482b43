"""A cluster that starts with its nodes only, and what the API fills in on objects created through it."""

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.common.validation import parse_model
from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.sim.api.defaults import on_create
from gpupoc.sim.config import ClusterConfig, emptied, load_cluster_config, shipped_config
from gpupoc.sim.server import make_state


@pytest.mark.parametrize("mode", list(SchedulerMode))
def test_an_emptied_config_keeps_the_nodes_and_drops_tenants_priorities_and_queues(mode, tmp_path):
    cfg = emptied(load_cluster_config(shipped_config(mode)))
    assert cfg.empty and not cfg.tenants and not cfg.priority_classes and cfg.pools
    state = make_state(cfg, tmp_path)
    assert {n["metadata"]["name"] for n in state.store.list("nodes")} == {n for p in cfg.pools for n in p.node_names()}
    assert not state.store.list("resourcequotas") and not state.store.list("priorityclasses")
    assert not state.store.list("clusterqueues") and not state.store.list("localqueues")
    assert [i.context for i in state.identities.values()] == ["admin"]


def test_an_empty_config_that_still_declares_tenants_is_refused():
    data = load_cluster_config().model_dump(mode="json")
    data["empty"] = True
    with pytest.raises(ConfigError, match="an empty cluster"):
        parse_model(ClusterConfig, data, "cluster config")


def test_a_namespace_created_through_the_api_is_active_and_labelled_with_its_name(tmp_path):
    state = make_state(emptied(load_cluster_config()), tmp_path)
    ns = {"metadata": {"name": "team-a"}}
    on_create(state, "namespaces", ns)
    assert ns["metadata"]["labels"]["kubernetes.io/metadata.name"] == "team-a" and ns["status"]["phase"] == "Active"


def test_a_cluster_queue_created_through_the_api_gets_kueues_defaults_and_an_empty_status(tmp_path):
    state = make_state(emptied(load_cluster_config(shipped_config(SchedulerMode.KUEUE))), tmp_path)
    cq = {"metadata": {"name": "q"}, "spec": {"resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
        {"name": "training", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8"}]}]}]}}
    on_create(state, "clusterqueues", cq)
    assert cq["spec"]["queueingStrategy"] == "BestEffortFIFO" and cq["spec"]["preemption"]["withinClusterQueue"] == "Never"
    assert cq["status"]["flavorsUsage"][0]["name"] == "training" and cq["status"]["admittedWorkloads"] == 0


def test_a_queue_created_through_the_api_is_an_open_volcano_queue_in_volcano_mode(tmp_path):
    state = make_state(emptied(load_cluster_config(shipped_config(SchedulerMode.VOLCANO))), tmp_path)
    q = {"metadata": {"name": "team-a"}, "spec": {"weight": 3}}
    on_create(state, "queues", q)
    assert q["status"]["state"] == "Open" and q["spec"] == {"weight": 3, "reclaimable": True}
