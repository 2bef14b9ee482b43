"""ResourceQuota accounting and status.used upkeep."""

from decimal import Decimal

import pytest
from gpupoc.sim import quota
from gpupoc.sim.bootstrap import bootstrap
from gpupoc.sim.cluster import ClusterState, make_identities
from gpupoc.sim.config import load_cluster_config


def make_state(tmp_path):
    state = ClusterState(config=load_cluster_config(), data_dir=tmp_path)
    state.identities = make_identities(state.config)
    bootstrap(state)
    return state


def pod(name, gpus, phase="Running", ns="team-vision"):
    return {"metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "base", "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}]},
            "status": {"phase": phase}}


def test_parse_quantity():
    assert quota.parse_quantity("2") == 2
    assert quota.parse_quantity("500m") == Decimal("0.5")
    assert quota.parse_quantity("1Gi") == 2**30
    assert quota.parse_quantity("1k") == 1000
    with pytest.raises(ValueError, match="got 'abc'"):
        quota.parse_quantity("abc")


def test_pod_requests_take_max_of_init_containers():
    p = pod("a", 1)
    p["spec"]["initContainers"] = [{"name": "i", "resources": {"requests": {"nvidia.com/gpu": "4"}}}]
    assert quota.pod_requests(p)["requests.nvidia.com/gpu"] == 4
    assert quota.pod_requests(p)["pods"] == 1


def test_refresh_counts_only_non_terminal_pods(tmp_path):
    state = make_state(tmp_path)
    state.store.create("pods", pod("a", 2))
    state.store.create("pods", pod("b", 3, phase="Pending"))
    state.store.create("pods", pod("c", 8, phase="Succeeded"))
    state.store.create("pods", pod("d", 8, phase="Failed"))
    assert quota.refresh(state) >= 1
    used = state.store.get("resourcequotas", "team-vision", "team-vision-gpu")["status"]["used"]
    assert used == {"requests.nvidia.com/gpu": "5", "pods": "2"}


def test_refresh_is_a_no_op_when_nothing_changed(tmp_path):
    state = make_state(tmp_path)
    state.store.create("pods", pod("a", 2))
    quota.refresh(state)
    rv = state.store.rv
    assert quota.refresh(state) == 0
    assert state.store.rv == rv


def test_refresh_follows_spec_hard_changes(tmp_path):
    state = make_state(tmp_path)
    rq = state.store.get("resourcequotas", "team-nlp", "team-nlp-gpu")
    rq["spec"]["hard"]["requests.nvidia.com/gpu"] = "4"
    state.store.update("resourcequotas", rq)
    quota.refresh(state)
    assert rq["status"]["hard"]["requests.nvidia.com/gpu"] == "4"


def test_usage_follows_pod_phase_changes_and_deletions(tmp_path):
    state = make_state(tmp_path)
    state.store.create("pods", pod("a", 4))
    state.store.create("pods", pod("b", 2))
    assert quota.namespace_usage(state, "team-vision", ["requests.nvidia.com/gpu"])["requests.nvidia.com/gpu"] == 6
    b = state.store.get("pods", "team-vision", "b")
    b["status"]["phase"] = "Failed"
    state.store.update("pods", b)
    state.store.delete("pods", "team-vision", "a")
    used = quota.namespace_usage(state, "team-vision", ["requests.nvidia.com/gpu", "pods"])
    assert used == {"requests.nvidia.com/gpu": 0, "pods": 0}
    quota.refresh(state)
    rq = state.store.get("resourcequotas", "team-vision", "team-vision-gpu")
    assert rq["status"]["used"] == {"requests.nvidia.com/gpu": "0", "pods": "0"}
