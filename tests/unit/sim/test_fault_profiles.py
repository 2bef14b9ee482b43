"""The fault profiles' table: a cluster without faults keeps the correct platform's reactors; each profile
changes its own reactors (or ports) and no other, whatever else is planted."""

from __future__ import annotations

from dataclasses import fields

import pytest

from gpupoc.sim import fault_profiles
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import load_cluster_config
from gpupoc.sim.faults import Fault
from gpupoc.sim.reactors import Reactors

# What each profile changes: reactors by field name; ports as "events", "audit", "validating".
CHANGES = {
    Fault.CROSS_TENANT_LOGS: {"authorize"},
    Fault.QUOTA_NOT_ENFORCED: {"disabled_admission"},
    Fault.EVENTS_DROPPED: {"events"},
    Fault.LOGS_LOST_ON_FAILURE: {"container_exited"},
    Fault.PRIORITY_IGNORED: {"priority_queue"},
    Fault.GPUS_LEAK: {"keeps_gpus"},
    Fault.AUDIT_GAPS: {"audit"},
    Fault.GANG_PARTIAL: {"whole_gangs"},
    Fault.BORROW_NOT_RECLAIMED: {"reclaim_across_queues"},
    Fault.FAIRSHARE_IGNORED: {"fair_shares"},
    Fault.REASONS_OPAQUE: {"reasons_shown"},
    Fault.VAGUE_REASONS: {"reasons_shown", "opaque_fit_error"},
    Fault.GPUMEM_NOT_ENFORCED: {"device_env"},
    Fault.VGPU_OVERCOMMIT: {"card_memory_checked"},
    Fault.SLICE_LEAK: {"holds_slice"},
    Fault.ENDPOINTS_STALE: {"slice_endpoints"},
    Fault.READINESS_IGNORED: {"endpoint_ready"},
    Fault.SERVING_PREEMPTED: {"victim_whatever_priority"},
    Fault.POD_LOST: {"addons"},
    Fault.ADMISSION_REFUSED: {"validating"},
}


def planted(tmp_path, *faults: Fault) -> ClusterState:
    state = ClusterState(load_cluster_config(), tmp_path, faults=frozenset(faults))
    fault_profiles.install(state)
    return state


def changed(state: ClusterState) -> set[str]:
    plain = Reactors()
    out = {f.name for f in fields(Reactors) if getattr(state.reactors, f.name) != getattr(plain, f.name)}
    ports = {"events": state.events.drop_warnings, "audit": state.audit.audit_gaps,
             "validating": bool(state.hooks.validating)}
    return out | {name for name, on in ports.items() if on}


def test_without_faults_every_reactor_is_the_correct_platform_s(tmp_path):
    assert changed(planted(tmp_path)) == set()
    assert planted(tmp_path).reactors.opaque_fit_error(5) == "0/5 nodes are available."


@pytest.mark.parametrize("fault", list(Fault), ids=lambda f: f.value)
def test_each_profile_changes_its_own_reactors_only(tmp_path, fault):
    assert changed(planted(tmp_path, fault)) == CHANGES[fault]


def test_profiles_planted_together_each_keep_their_change(tmp_path):
    state = planted(tmp_path, Fault.REASONS_OPAQUE, Fault.VAGUE_REASONS, Fault.GPUS_LEAK)
    assert state.reactors.opaque_fit_error(5) == "Pod is pending."
    assert state.reactors.keeps_gpus("Failed", False) and not state.reactors.keeps_gpus("Failed", True)
    assert not state.reactors.keeps_gpus("Succeeded", False)


def test_gpumem_not_enforced_drops_only_the_memory_limits(tmp_path):
    env = {"CUDA_DEVICE_SM_LIMIT": "30", "CUDA_DEVICE_MEMORY_LIMIT_0": "4000m", "CUDA_DEVICE_MEMORY_LIMIT_1": "2m"}
    assert planted(tmp_path / "ok").reactors.device_env(dict(env)) == env
    assert planted(tmp_path / "f", Fault.GPUMEM_NOT_ENFORCED).reactors.device_env(dict(env)) == {
        "CUDA_DEVICE_SM_LIMIT": "30"}
