"""The hami adapter: no queues, pods named for hami-scheduler, the simulated cluster's hami mode."""

from __future__ import annotations

from pathlib import Path

from gpupoc.demo.services import sim_mode_for
from gpupoc.plan import load_plan
from gpupoc.plan.model import Adapter

PLANS = Path(__file__).resolve().parents[3] / "plans"


def test_the_hami_plan_loads_without_queues_and_runs_on_the_hami_mode():
    plan = load_plan(PLANS / "hami.yaml")
    assert plan.platform.adapter is Adapter.HAMI and plan.platform.scheduler_name == "hami-scheduler"
    assert sim_mode_for(PLANS / "hami.yaml") == "hami"
