"""Scheduler modes: parsing ``--mode``, and the API version and kind of each mode's queues and podgroups."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.kube.schedulers import KAI_GROUP, KINDS, VOLCANO_GROUP, SchedulerMode, parse_mode


def test_parse_mode_names_the_known_modes():
    assert parse_mode("volcano") == SchedulerMode.VOLCANO and parse_mode("") is None
    with pytest.raises(ConfigError) as err:
        parse_mode("yunikorn")
    assert "kube, kueue, volcano, kai" in str(err.value)


def test_each_gang_schedulers_queues_and_podgroups_are_its_own_cluster_and_namespaced_kinds():
    assert KINDS[SchedulerMode.VOLCANO] == {"queues": (f"{VOLCANO_GROUP}/v1beta1", "Queue", False),
                                            "podgroups": (f"{VOLCANO_GROUP}/v1beta1", "PodGroup", True)}
    assert KINDS[SchedulerMode.KAI] == {"queues": (f"{KAI_GROUP}/v2", "Queue", False),
                                        "podgroups": (f"{KAI_GROUP}/v2alpha2", "PodGroup", True)}
    assert SchedulerMode.KUEUE not in KINDS  # Kueue's queues are ClusterQueues and LocalQueues, kinds of their own
