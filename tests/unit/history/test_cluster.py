"""Which jobs a cluster can run: one pod per node, each pod on one node of a pool."""

from __future__ import annotations

from gpupoc.history.cluster import ClusterShape, replay_skip_reason, skip_reason
from gpupoc.history.model import JobState, SkipReason

from .conftest import job


def test_reasons_come_in_order_and_none_for_a_replayable_job(cluster):
    assert skip_reason(job(started=False), cluster) is SkipReason.NOT_STARTED
    assert skip_reason(job(run=0.0), cluster) is SkipReason.NO_DURATION
    assert skip_reason(job(gpus=0), cluster) is SkipReason.NO_GPU
    assert skip_reason(job(gpus=12, nodes=8), cluster) is SkipReason.UNEVEN_GPUS
    assert skip_reason(job(gpus=8), cluster) is None


def test_a_job_fits_when_a_pool_has_enough_nodes_of_enough_gpus(cluster):
    assert cluster.fitting_pools(job(gpus=4)) == ["training", "inference"]
    assert cluster.fitting_pools(job(gpus=16, nodes=2)) == ["training"]
    assert skip_reason(job(gpus=24, nodes=3), cluster) is None
    assert skip_reason(job(gpus=32, nodes=4), cluster) is SkipReason.TOO_LARGE  # 4 nodes, the pool has 3
    assert skip_reason(job(gpus=16, nodes=1), cluster) is SkipReason.TOO_LARGE  # 16 GPUs on one 8-GPU node


def test_with_only_a_gpu_total_the_size_is_all_that_counts():
    total = ClusterShape.of_gpus(32)
    assert skip_reason(job(gpus=32, nodes=1), total) is None
    assert skip_reason(job(gpus=64, nodes=8), total) is SkipReason.TOO_LARGE
    assert total.describe() == "32 GPUs"


def test_without_a_cluster_size_is_not_checked():
    assert skip_reason(job(gpus=1024, nodes=128)) is None


def test_a_replay_leaves_out_states_it_has_no_rule_for(cluster):
    assert replay_skip_reason(job(state=JobState.OTHER), cluster) is SkipReason.STATE_OTHER
    assert replay_skip_reason(job(state=JobState.NODE_FAIL), cluster) is None
