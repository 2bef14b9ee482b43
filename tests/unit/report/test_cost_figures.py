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
    tables = {k: v for k, v in syn.good_tables("utilization").items() if k != "cost_allocation"}
    d = syn.write_run(tmp_path / "evidence", "utilization", "r1", tables)
    f, _ = figures.cost_attribution({"utilization": RunEvidence.open(d)})
    labels = {x.label for x in f}
    assert "cost_not_collected" in labels and not labels & {"cost_total", "cost_idle"}


# --- the item's verdict, from the evidence the cost step writes to the checks that judge it ---

L40S = "NVIDIA L40S"


def priced_run(tmp_path, gpu_hour: dict, namespace: str | None = "team-b"):
    """A utilization run whose cost step priced its GPU-hours with ``gpu_hour``, validated by the suites."""
    from types import SimpleNamespace

    from gpupoc.evidence import EvidenceWriter
    from gpupoc.classes.utilization.cost import write_cost
    from gpupoc.validation import validate_run
    from gpupoc.validation.parameters import default_parameters
    from gpupoc.validation.suites import load_suites

    ut = syn.utilization()
    ut.loc[ut["pod"] == "training-1", "namespace"] = namespace
    pools = [SimpleNamespace(name="training", gpu_model=H100, capacity_gpus=3, node_names=["training-0"]),
             SimpleNamespace(name="inference", gpu_model=L40S, capacity_gpus=3, node_names=["inference-0"])]
    prices = Prices.model_validate({"currency": "EUR", "gpu_hour": gpu_hour})
    w = EvidenceWriter(tmp_path / "evidence", "poc_utilization", "r1")
    w.write_suite_parameters(default_parameters("utilization", load_suites()))
    w.write("workload_runs", syn.workload_runs(6, "utilization").to_dict("records"), source="synthetic")
    w.write("utilization", ut.to_dict("records"), source="synthetic")
    window = SimpleNamespace(start=syn.T0, end=syn.T0 + pd.Timedelta(hours=4))
    write_cost(SimpleNamespace(plan=SimpleNamespace(pools=pools, prices=prices), writer=w), ut, None, window, set())
    w.write_manifest(window_start=window.start, window_end=window.end, plan_hash="0" * 64, platform=syn.SIM_PLATFORM,
                     extra={"test_class": "utilization"})
    return validate_run(w.run_dir)


def cost_item(summary):
    from gpupoc.report.items import check_items
    from gpupoc.report.rules import DecisionRules
    from gpupoc.validation.suites import load_suites

    return next(i for i in check_items({"utilization": summary}, load_suites(), DecisionRules())
                if i.id == "cost_attribution")


def example(per_hour: float) -> dict:
    return {"per_hour": per_hour, "source": "example figure"}


def test_the_cost_attribution_item_passes_when_every_gpu_hour_is_priced_attributed_and_idle_shown(tmp_path):
    item = cost_item(priced_run(tmp_path, {H100: example(2.5), L40S: example(0.9)}))
    cost = {c.check_id: c.verdict.value for c in item.checks if c.check_id.startswith("COST-")}
    assert cost == {"COST-01": "pass", "COST-02": "pass", "COST-03": "pass"}
    assert item.verdict.value == "pass", item.reason


def test_a_gpu_model_without_a_price_leaves_the_cost_attribution_item_not_verified_naming_it(tmp_path):
    item = cost_item(priced_run(tmp_path, {H100: example(2.5)}))
    assert item.verdict.value == "not_verified"
    assert "COST-01" in item.reason and L40S in item.reason, item.reason


def test_gpu_hours_attributed_to_no_team_fail_the_item_naming_the_pod(tmp_path):
    item = cost_item(priced_run(tmp_path, {H100: example(2.5), L40S: example(0.9)}, namespace=None))
    assert item.verdict.value == "fail"
    assert "COST-02" in item.reason and "training-1" in item.reason, item.reason


def test_cost_by_hour_shows_the_idle_gpu_hours_and_cost_of_each_bucket(tmp_path):
    d = syn.write_run(tmp_path / "evidence", "utilization", "r1", syn.good_tables("utilization"))
    _, t = figures.cost_attribution({"utilization": RunEvidence.open(d)})
    hours = rows_of(t, "cost_by_hour")
    assert len(hours) == 4 and all(r["idle_gpu_hours"] == 2.0 for r in hours)  # 6 GPUs offered, 4 held
    assert sum(r["cost"] + r["idle_cost"] for r in hours) == pytest.approx(40.8)  # the window's cost


def test_money_is_shown_as_its_currency_counts_it_in_the_reports_language():
    from gpupoc.report.cells import cell, figure_unit, figure_value
    from gpupoc.report.wording import Wording

    en, zh = Wording("en"), Wording("zh")
    assert figure_value(1234.5, "EUR", en) == "1,234.50" and figure_unit("EUR", en) == "EUR"
    assert figure_unit("EUR", zh) == "欧元" and figure_unit("USD", zh) == "美元"
    assert figure_value(1234.5, "JPY", en) == "1,234"  # yen have no minor unit
    assert figure_value(-0.001, "EUR", en) == "0.00"
    assert figure_value(7.25, "unit.gpu_hours", en) == "7.25" and figure_unit("unit.gpu_hours", zh) == "GPU·时"
    assert cell(16.0, "own_cost", en).text == "16.00" and cell(16.0, "gpu_hours", en).text == "16"
