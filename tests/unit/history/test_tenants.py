"""Users -> tenants: greedy by GPU time towards the quota shares, each job on a tenant that can run it."""

from __future__ import annotations

import pytest

from gpupoc.history.tenants import TenantTarget, map_groups, tenant_targets

from .conftest import job


def test_targets_are_quota_shares_and_pools_come_from_the_waves(plan):
    targets = {t.name: t for t in tenant_targets(plan)}
    assert targets["team-vision"].share == pytest.approx(16 / 36)
    assert targets["team-serving"].share == pytest.approx(8 / 36)
    assert targets["team-vision"].pools == ("training",)
    assert targets["team-serving"].pools == ("inference",)


def test_groups_go_most_gpu_time_first_to_the_tenant_furthest_below_target(plan, cluster):
    # GPU seconds: a 4000, b 3000, c 2000, d 1000 (all one-GPU jobs any tenant can run)
    jobs = [job("a", user="a", run=4000), job("b", user="b", run=3000), job("c", user="c", run=2000),
            job("d", user="d", run=1000)]
    result = map_groups(jobs, "user", tenant_targets(plan), cluster)
    assert [(m.group, m.tenant) for m in result.assignments] == [
        ("a", "team-vision"),   # deficits 4444 / 3333 / 2222
        ("b", "team-nlp"),      # 444 / 3333 / 2222
        ("c", "team-serving"),  # 444 / 333 / 2222
        ("d", "team-vision"),   # 444 / 333 / 222
    ]
    assert [m.share for m in result.assignments] == [0.4, 0.3, 0.2, 0.1]


def test_a_job_too_large_for_its_groups_tenant_moves_to_one_that_can_run_it(plan, cluster):
    # user b's first choice is team-nlp (quota 12): its 16-GPU gang moves to team-vision (quota 16)
    jobs = [job("a1", user="a", run=8000), job("b1", user="b", run=3000), job("b2", user="b", run=3000),
            job("b3", user="b", gpus=16, nodes=2, run=10)]
    result = map_groups(jobs, "user", tenant_targets(plan), cluster)
    b = next(m for m in result.assignments if m.group == "b")
    assert b.tenant == "team-nlp" and b.moved == {"team-vision": 1}
    assert result.tenant_of(jobs[3]) == "team-vision" and result.tenant_of(jobs[1]) == "team-nlp"


def test_a_group_goes_where_at_least_half_of_its_jobs_can_run(plan, cluster):
    # both jobs need 8 GPUs on one node: only the training pool (team-vision, team-nlp) has such nodes
    jobs = [job("s1", user="s", gpus=8, run=100), job("s2", user="s", gpus=8, run=100)]
    targets = [t for t in tenant_targets(plan) if t.name != "team-vision"]
    result = map_groups(jobs, "user", targets, cluster)
    assert result.assignments[0].tenant == "team-nlp"  # team-serving is further below target but cannot run them


def test_a_job_no_tenant_can_run_has_no_tenant(cluster):
    small = [TenantTarget("t", 1.0, quota_gpus=4, pools=("training",))]
    big = job("big", gpus=8)
    result = map_groups([job("ok"), big], "user", small, cluster)
    assert result.tenant_of(big) is None and result.assignments[0].moved == {}
