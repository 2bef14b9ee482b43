"""The cost attribution item in money: cost by team (own and shared), idle and waste with who held them, by task
type, pool and hour, the top waste holders and the prices with their sources; not verified where the plan's
prices lack a model, naming it."""

from __future__ import annotations

import pandas as pd
import pytest

from gpupoc.costing.allocation import PoolCapacity, UsageRow, allocate
from gpupoc.costing.prices import Prices
from gpupoc.costing.rows import evidence_rows
from gpupoc.evidence.reader import RunEvidence
from gpupoc.report import figures
from gpupoc.validation import synthetic as syn

H100 = "NVIDIA H100 80GB HBM3"
PRICES = Prices.model_validate({"currency": "EUR", "examples": True,
                                "gpu_hour": {H100: {"per_hour": 2.0, "source": "example figure"}}})


def cost_rows() -> pd.DataFrame:
    rows = [UsageRow("team-a", "a1", "training", H100, "h0", 1.0, 0.25, "training"),
            UsageRow("team-a", "a1", "training", H100, "h1", 1.0, 1.0, "training"),
            UsageRow("team-b", "b1", "training", H100, "h0", 1.0, 0.5, "inference"),
            UsageRow("team-s", "s1", "training", H100, "h0", 1.0, 1.0, "inference", shared=True)]
    return pd.DataFrame(evidence_rows(allocate(rows, [PoolCapacity("training", H100, 8.0)], PRICES), PRICES))


def runs(tmp_path, not_verified: dict | None = None) -> dict[str, RunEvidence]:
    tables = syn.good_tables("utilization")
    tables["cost_allocation"] = None if not_verified else cost_rows()
    d = syn.write_run(tmp_path / "evidence", "utilization", "r1", tables, not_verified=not_verified)
    return {"utilization": RunEvidence.open(d)}


def rows_of(t, title):
    tb = next(x for x in t if x.title == title)
    return [dict(zip(tb.columns, r)) for r in tb.rows]


def test_the_windows_cost_idle_and_waste_are_in_the_plans_currency(tmp_path):
    f, _ = figures.cost_attribution(runs(tmp_path))
    by = {x.label: x for x in f}
    assert by["cost_total"].value == 16.0 and by["cost_total"].unit == "EUR"  # 8 GPU-h offered at 2.0
    assert by["cost_idle"].value == 8.0 and by["cost_waste"].value == 2.5 and by["cost_shared"].value == 2.0
    assert by["priced_gpu_hours"].value == 8.0 and by["idle_gpu_hours"].value == 4.0  # every GPU-hour priced


def test_cost_by_team_spreads_the_shared_pool_and_shows_idle_as_its_own_row(tmp_path):
    _, t = figures.cost_attribution(runs(tmp_path))
    team = {r["team"]: r for r in rows_of(t, "cost_by_team")}
    assert set(team) == {"team-a", "team-b", "__idle__"}
    assert team["team-a"]["own_cost"] == 4.0 and team["team-a"]["shared_cost"] == pytest.approx(1.33)
    assert team["__idle__"]["total_cost"] == 8.0
    assert sum(r["total_cost"] for r in team.values()) == pytest.approx(16.0, abs=0.01)


def test_top_waste_names_the_team_and_pod_that_held_it(tmp_path):
    _, t = figures.cost_attribution(runs(tmp_path))
    assert [(r["team"], r["pod"], r["waste_cost"]) for r in rows_of(t, "top_waste")] == [
        ("team-a", "a1", 1.5), ("team-b", "b1", 1.0)]
    assert rows_of(t, "prices") == [{"gpu_model": H100, "price_per_hour": 2.0, "price_source": "example figure",
                                     "currency": "EUR"}]
    assert {r["hour"] for r in rows_of(t, "cost_by_hour")} == {"h0", "h1"}


def test_an_unpriced_model_leaves_the_cost_not_verified_naming_it(tmp_path):
    why = "no price for GPU model(s) NVIDIA L40S: add each under prices.gpu_hour"
    f, t = figures.cost_attribution(runs(tmp_path, {"cost_allocation": why}))
    by = {x.label: x.value for x in f}
    assert "NVIDIA L40S" in by["cost_not_verified"] and "cost_total" not in by
    assert not {x.title for x in t} & {"cost_by_team", "top_waste"}
    assert "allocated_gpu_hours" in by  # the GPU-hours are still shown


def test_a_run_written_before_costs_were_priced_says_so_without_a_money_figure(tmp_path):
    d = syn.write_run(tmp_path / "evidence", "utilization", "r1", syn.good_tables("utilization"))
    f, _ = figures.cost_attribution({"utilization": RunEvidence.open(d)})
    labels = {x.label for x in f}
    assert "cost_not_collected" in labels and not labels & {"cost_total", "cost_idle"}
