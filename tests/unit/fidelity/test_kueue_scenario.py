"""The Kueue scenario's phases: each step once, fair sharing and waitForPodsReady in phases of their own, the
simulated mode that serves each, and the accepted list readable with every entry naming its test."""

from __future__ import annotations

from gpupoc.fidelity.compare import load_accepted
from gpupoc.fidelity.kueue_scenario import ACCEPTED_KUEUE, PHASES, SIM_NOT_RUN, STEP_NAMES


def test_every_kueue_step_runs_once_in_a_phase():
    assert sorted(STEP_NAMES) == sorted(set(STEP_NAMES))
    assert set(STEP_NAMES) == {"kueue_over_quota", "kueue_preemption", "kueue_reclaim", "kueue_fair_sharing",
                               "kueue_pods_ready"}


def test_fair_sharing_and_pods_ready_have_their_own_configuration():
    by_name = {p.name: p for p in PHASES}
    assert by_name["fair"].fair_sharing and by_name["fair"].sim_mode == "kueue"
    assert by_name["pods_ready"].wait_for_pods_ready_seconds > 0
    assert not by_name["classical"].fair_sharing and not by_name["classical"].wait_for_pods_ready_seconds


def test_a_step_the_simulated_mode_cannot_run_says_why():
    assert set(SIM_NOT_RUN) <= set(STEP_NAMES) and all(SIM_NOT_RUN.values())


def test_the_accepted_kueue_differences_name_their_test():
    entries = load_accepted(ACCEPTED_KUEUE)
    assert entries and all(e.test and e.why for e in entries)
    assert {e.step for e in entries} <= set(STEP_NAMES)
