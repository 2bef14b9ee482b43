"""Behaviour profiles are chosen by name like fault profiles; unknown names and clashing profiles are refused."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.sim.behaviours import Behaviour, parse_behaviours, seeded
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import load_cluster_config


def test_names_are_parsed_and_blanks_ignored():
    assert parse_behaviours("") == frozenset()
    assert parse_behaviours(" throttled, ,watch-cuts") == {Behaviour.THROTTLED, Behaviour.WATCH_CUTS}


def test_an_unknown_name_is_refused_with_the_known_ones():
    with pytest.raises(ConfigError) as err:
        parse_behaviours("throttled,slow")
    text = str(err.value)
    assert "'slow'" in text and "slow-api" in text and "release-staggered" in text


def test_two_profiles_that_each_decide_how_a_preempted_pod_is_stopped_are_refused_together():
    with pytest.raises(ConfigError, match="kai-wording and volcano-wording"):
        parse_behaviours("volcano-wording,kai-wording")
    assert parse_behaviours("kueue-requeue,controller-recreates") == {Behaviour.KUEUE_REQUEUE,
                                                                      Behaviour.CONTROLLER_RECREATES}


def test_the_seeded_generator_depends_on_seed_and_parts():
    assert seeded(1, "a").random() == seeded(1, "a").random()
    assert seeded(1, "a").random() != seeded(2, "a").random()


def test_the_cluster_state_carries_its_behaviours_seed_and_controllers_as_fields(tmp_path):
    from gpupoc.sim.bootstrap import bootstrap

    state = ClusterState(load_cluster_config(), tmp_path, behaviours=frozenset({Behaviour.AUDIT_METADATA}),
                         behaviour_seed=7)
    bootstrap(state)
    assert state.behaves(Behaviour.AUDIT_METADATA) and state.behaviour_seed == 7
    assert state.audit.metadata_only
    for name in ("scheduler", "kueue", "kubelet", "recreator", "event_index", "quota_usage"):
        assert getattr(state, name) is not None, f"bootstrap did not build {name}"
    assert not [k for k in vars(state) if k.startswith("_gpupoc")]
