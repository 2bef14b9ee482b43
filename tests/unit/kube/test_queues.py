"""The queue models refuse what each project refuses, and the cross-checks name the offending path."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gpupoc.kube.queues import (
    ClusterQueue, KaiConfig, KaiQueue, KueueConfig, LocalQueue, VolcanoConfig, VolcanoQueue, check_queue_references)


def test_a_cluster_queue_limit_needs_a_cohort():
    with pytest.raises(ValidationError, match="borrowing_limit_gpus: set only with a cohort"):
        ClusterQueue(name="a", flavor="pool", nominal_gpus=4, borrowing_limit_gpus=2)
    assert ClusterQueue(name="a", flavor="pool", nominal_gpus=4, cohort="c", borrowing_limit_gpus=2).cohort == "c"


def test_a_cluster_queue_lends_at_most_its_nominal_quota():
    with pytest.raises(ValidationError, match="lending_limit_gpus: 5 exceeds nominal_gpus 4"):
        ClusterQueue(name="a", flavor="pool", nominal_gpus=4, cohort="c", lending_limit_gpus=5)


def test_a_volcano_queue_keeps_guarantee_within_deserved_within_capability():
    with pytest.raises(ValidationError, match="deserved_gpus: 9 exceeds capability_gpus 8"):
        VolcanoQueue(name="q", capability_gpus=8, deserved_gpus=9)
    with pytest.raises(ValidationError, match="deserved_gpus: 1 is below guarantee_gpus 2"):
        VolcanoQueue(name="q", deserved_gpus=1, guarantee_gpus=2)


def test_a_kai_queue_limit_covers_its_quota_unless_unlimited():
    with pytest.raises(ValidationError, match="limit_gpus: 2.0 is below quota_gpus 4.0"):
        KaiQueue(name="q", quota_gpus=4, limit_gpus=2)
    assert KaiQueue(name="q", quota_gpus=4).limit_gpus == -1


def test_references_name_unknown_pools_queues_namespaces_and_deep_parents():
    kueue = KueueConfig(cluster_queues=[ClusterQueue(name="a", flavor="gone", nominal_gpus=1)],
                        local_queues=[LocalQueue(name="l", namespace="nobody", cluster_queue="b")])
    kai = KaiConfig(queues=[KaiQueue(name="top"), KaiQueue(name="mid", parent="top"),
                            KaiQueue(name="leaf", parent="mid"), KaiQueue(name="leaf", parent="x")])
    errors: list[str] = []
    check_queue_references(errors, kueue, VolcanoConfig(), kai, pools={"pool"}, namespaces={"team-a"})
    assert errors == [
        "kueue.cluster_queues[0].flavor: unknown pool 'gone'; one of ['pool']",
        "kueue.local_queues[0].cluster_queue: unknown cluster queue 'b'",
        "kueue.local_queues[0].namespace: 'nobody' is no tenant namespace",
        "kai.queues: duplicate name 'leaf'",
        "kai.queues[2].parent: 'mid' has a parent itself; queues here have two levels (a top-level queue and its "
        "leaves)",
        "kai.queues[3].parent: unknown queue 'x'; one of ['leaf', 'mid', 'top']",
    ]
