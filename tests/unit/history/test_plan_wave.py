"""History -> replay wave: window, compression, tenant shares, failing states, priorities, drops."""

from __future__ import annotations

from datetime import timedelta

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.history.importer import import_history
from gpupoc.history.model import JobState
from gpupoc.history.plan_wave import WaveOptions, parse_window, plan_wave, priority_class
from gpupoc.history.replay import Outcome
from gpupoc.history.table import History

from .conftest import T0, job

SAMPLE = "plans/history/kalos-300.csv"


def wave_of(jobs, plan, **kw):
    options = WaveOptions(**({"compression": 10.0, "first": len(jobs)} | kw))
    return plan_wave(History(jobs, "UTC"), plan, options)


def test_arrivals_and_run_times_are_divided_by_the_factor(plan):
    jobs = [job("a", at=0, run=600, wait=30), job("b", at=960, run=96, wait=0), job("c", at=1920, run=50)]
    wave = wave_of(jobs, plan, compression=96.0)
    assert [i.at_seconds for i in wave.items] == [0.0, 10.0, 20.0]
    assert [i.duration_seconds for i in wave.items] == [6.25, 1.0, 1.0]
    assert wave.floored_durations == 1  # 50 s / 96 < 1 s
    assert wave.items[0].history_wait_seconds == 30.0 and wave.items[0].history_wait_scaled_seconds == 0.312
    assert wave.items[0].history_run_seconds == 600.0


def test_a_day_into_15_minutes_is_a_factor_of_96(plan):
    jobs = [job("a", at=0), job("b", at=86399)]
    wave = wave_of(jobs, plan, compression=96.0, first=None,
                   window=(T0, T0 + timedelta(days=1)))
    assert wave.items[-1].at_seconds == pytest.approx(900, abs=0.02)


def test_failed_and_cancelled_states_become_failing_items(plan):
    jobs = [job("ok", at=0), job("err", at=1, state=JobState.FAILED, exit_code=3),
            job("err0", at=2, state=JobState.FAILED), job("node", at=3, state=JobState.NODE_FAIL),
            job("cxl", at=4, state=JobState.CANCELLED, run=100), job("late", at=5, state=JobState.TIMEOUT, run=100)]
    items = {i.job_id: i for i in wave_of(jobs, plan, compression=10.0, cut_share=0.5).items}
    assert (items["ok"].outcome, items["ok"].expected_exit_code) == (Outcome.SUCCEED, 0)
    assert (items["err"].outcome, items["err"].expected_exit_code) == (Outcome.FAIL, 3)
    assert items["err0"].expected_exit_code == 1 and items["node"].expected_exit_code == 137
    cxl = items["cxl"]
    assert (cxl.outcome, cxl.expected_exit_code, cxl.cancel_after_seconds, cxl.duration_seconds) == \
        (Outcome.CANCEL, None, 10.0, 20.0)
    late = items["late"]
    assert (late.outcome, late.deadline_seconds, late.duration_seconds) == (Outcome.DEADLINE, 10.0, 20.0)


def test_gangs_keep_their_nodes_as_replicas_with_equal_pods(plan):
    item = wave_of([job("g", gpus=16, nodes=2, run=1000)], plan).items[0]
    assert (item.gpus, item.replicas, item.node_num, item.gpus_total, item.pool) == (8, 2, 2, 16, "training")
    assert item.tenant == "team-vision"  # the only tenant whose quota holds 16 GPUs


def test_jobs_that_cannot_be_replayed_are_counted_per_reason(plan):
    jobs = [job("ok"), job("cpu", gpus=0), job("never", started=False), job("huge", gpus=64, nodes=8),
            job("odd", state=JobState.OTHER), job("big", gpus=24, nodes=3)]  # 24 GPUs: beyond every quota
    wave = wave_of(jobs, plan, first=None, window=(T0, T0 + timedelta(hours=1)))
    assert wave.jobs_in_window == 6 and wave.jobs_replayed == 1
    assert wave.dropped == {"no_gpu": 1, "not_started": 1, "state_other": 1, "too_large": 1,
                            "too_large_for_tenant": 1}


def test_first_n_counts_replayable_jobs_and_the_window_ends_at_the_nth(plan):
    jobs = [job("a", at=0), job("cpu", at=5, gpus=0), job("b", at=10), job("c", at=20)]
    wave = wave_of(jobs, plan, first=2)
    assert [i.job_id for i in wave.items] == ["a", "b"] and wave.dropped == {"no_gpu": 1}
    assert wave.selection.window_end == (T0 + timedelta(seconds=10)).isoformat()


def test_the_window_is_half_open(plan):
    jobs = [job("a", at=0), job("b", at=3600)]
    wave = wave_of(jobs, plan, first=None, window=(T0, T0 + timedelta(hours=1)))
    assert [i.job_id for i in wave.items] == ["a"]


def test_priority_by_rule_within_the_tenants_classes(plan):
    assert priority_class(job(gpus=8, run=10), plan, "team-vision", 8, 300) == "gpupoc-high"
    assert priority_class(job(gpus=2, nodes=2, run=10), plan, "team-nlp", 8, 300) == "gpupoc-high"
    assert priority_class(job(gpus=1, run=100), plan, "team-vision", 8, 300) == "gpupoc-low"
    assert priority_class(job(gpus=1, run=1000), plan, "team-vision", 8, 300) == "gpupoc-normal"
    assert priority_class(job(gpus=4, run=1000), plan, "team-serving", 4, 300) == "gpupoc-critical"
    assert priority_class(job(gpus=1, run=1000), plan, "team-serving", 4, 300) == "gpupoc-normal"


def test_vcs_are_the_groups_when_the_history_has_them(plan):
    jobs = [job("a", user="u1", vc="vcA"), job("b", user="u2", vc="vcA")]
    wave = wave_of(jobs, plan)
    assert wave.group_by == "vc" and [m.group for m in wave.tenant_mapping] == ["vcA"]
    assert wave_of(jobs, plan, group_by="user").group_by == "user"


def test_windows_parse_in_the_history_zone_and_bad_ones_say_how():
    start, end = parse_window("2023-05-01T00:00/2023-05-02T00:00", "+08:00")
    assert start.isoformat() == "2023-05-01T00:00:00+08:00" and (end - start) == timedelta(days=1)
    with pytest.raises(ConfigError, match="--window: expected START/END in ISO 8601"):
        parse_window("yesterday", "UTC")
    with pytest.raises(ConfigError, match="is not after the start"):
        parse_window("2023-05-02T00:00/2023-05-01T00:00", "UTC")


def test_bad_options_are_listed(plan):
    with pytest.raises(ConfigError) as exc:
        wave_of([job()], plan, compression=0, first=None, cut_share=2.0, test_class="nope")
    assert exc.value.errors == [
        "selection: give exactly one of --window START/END or --first N",
        "--compress: expected a positive factor (96 turns a day into 15 minutes), got 0",
        "--cut-share: expected a share in (0, 1], got 2.0",
        "--class: unknown test class 'nope'; one of queue_congestion, tenant_isolation, utilization, "
        "fault_recovery, audit_trail",
    ]


def test_the_shipped_sample_becomes_a_wave_the_plan_can_run(plan):
    history = import_history(SAMPLE, "acme").history
    wave = plan_wave(history, plan, WaveOptions(compression=96.0, window=parse_window(
        "2023-05-01T00:00/2023-05-02T00:00", history.timezone)))
    assert wave.jobs_replayed == wave.jobs_in_window > 100 and wave.dropped == {}
    for item in wave.items:
        tenant = plan.tenant(item.tenant)
        pool = plan.pool(item.pool)
        assert item.priority_class in tenant.priority_classes
        assert item.gpus <= pool.gpus_per_node and item.replicas <= pool.nodes
        assert item.gpus_total <= tenant.quota.gpus
    assert {i.outcome for i in wave.items} == set(Outcome) - {Outcome.DEADLINE}  # Kalos-like: no timeouts
    shares = {name: s.replayed for name, s in wave.tenant_shares.items()}
    assert all(s > 0.1 for s in shares.values())  # every tenant gets a real part of the load
    assert sum(s.items for s in wave.tenant_shares.values()) == len(wave.items)
    assert max(i.at_seconds for i in wave.items) <= 900  # a day into 15 minutes


def test_the_mapping_covers_every_group_and_sums_to_the_whole(plan):
    history = import_history(SAMPLE, "acme").history
    wave = plan_wave(history, plan, WaveOptions(compression=96.0, first=100))
    assert sum(m.jobs for m in wave.tenant_mapping) == wave.jobs_replayed == 100
    assert sum(m.share for m in wave.tenant_mapping) == pytest.approx(1.0, abs=1e-4)
    assert {m.group for m in wave.tenant_mapping} == {i.group for i in wave.items}
