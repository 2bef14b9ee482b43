"""The utilization class's cost step: the GPU-hours priced into ``cost_allocation`` and a showback CSV per team;
no prices, or a model without one, leaves the cost not verified naming what is missing."""

from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pandas as pd
import pytest

from gpupoc.costing.prices import Prices
from gpupoc.evidence.schema import to_arrow
from gpupoc.classes.utilization.cost import write_cost

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
WINDOW = SimpleNamespace(start=T0, end=T0 + timedelta(hours=1))
H100 = "NVIDIA H100 80GB HBM3"


class Writer:
    def __init__(self):
        self.tables, self.unverified, self.files = {}, {}, {}

    def write(self, table, rows, source=""):
        self.tables[table] = rows

    def mark_not_verified(self, table, reason, source):
        self.unverified[table] = reason

    def write_csv(self, name, text):
        self.files[name] = text


def plan(prices: dict | None, model: str = H100):
    pool = SimpleNamespace(name="training", gpu_model=model, capacity_gpus=2, node_names=["n1"])
    return SimpleNamespace(pools=[pool], prices=Prices.model_validate(prices) if prices else None)


PRICES = {"currency": "EUR", "gpu_hour": {H100: {"per_hour": 3.0, "source": "quote"}}}
UTIL = pd.DataFrame([
    {"bucket": "b0", "namespace": "team-a", "pod": "a1", "pool": "training", "task_type": "training",
     "allocated_gpu_hours": 1.0, "used_gpu_hours": 0.5, "serving": False},
    {"bucket": "b0", "namespace": "team-s", "pod": "s1", "pool": "training", "task_type": "inference",
     "allocated_gpu_hours": 0.5, "used_gpu_hours": 0.5, "serving": True}])


def test_the_window_is_priced_into_the_table_and_a_showback_csv_per_team():
    ctx = SimpleNamespace(plan=plan(PRICES), writer=Writer())
    out = write_cost(ctx, UTIL, None, WINDOW, {"s1"})
    assert out == {"cost_total": 6.0, "cost_idle": 1.5, "cost_waste": 1.5, "currency": "EUR"}
    rows = ctx.writer.tables["cost_allocation"]
    assert to_arrow("cost_allocation", rows).num_rows == len(rows)
    assert {r["kind"] for r in rows} == {"workload", "shared", "idle", "shared_spread"}
    team = list(csv.DictReader(io.StringIO(ctx.writer.files["showback-team-a"])))[0]
    assert team["name"] == "team-a" and float(team["totalCost"]) == pytest.approx(4.5)  # 3.0 own + 1.5 shared
    assert "showback-idle" in ctx.writer.files and "showback-team-s" not in ctx.writer.files


def test_a_plan_without_prices_leaves_the_cost_not_verified_with_the_fix():
    ctx = SimpleNamespace(plan=plan(None), writer=Writer())
    write_cost(ctx, UTIL, None, WINDOW, set())
    assert "prices:" in ctx.writer.unverified["cost_allocation"] and not ctx.writer.tables


def test_a_gpu_model_without_a_price_is_named_and_nothing_is_priced():
    ctx = SimpleNamespace(plan=plan(PRICES, "NVIDIA A100-SXM4-40GB"), writer=Writer())
    out = write_cost(ctx, UTIL, None, WINDOW, set())
    assert "NVIDIA A100-SXM4-40GB" in out["cost_reason"] and not ctx.writer.files
    assert "NVIDIA A100-SXM4-40GB" in ctx.writer.unverified["cost_allocation"]


def test_a_failure_while_pricing_is_not_verified_and_names_it():
    ctx = SimpleNamespace(plan=plan(PRICES), writer=Writer())
    out = write_cost(ctx, UTIL.drop(columns=["namespace"]), None, WINDOW, set())
    assert out["cost_reason"].startswith("cost not computed") and "cost_allocation" in ctx.writer.unverified


def test_with_the_default_plan_the_cost_and_the_showback_csvs_are_sealed_in_the_runs_manifest(tmp_path):
    from gpupoc.evidence import EvidenceWriter
    from gpupoc.evidence.reader import RunEvidence
    from gpupoc.plan import DEFAULT_PLAN, load_plan
    from gpupoc.report.cost_figures import cost_details
    from gpupoc.validation import synthetic as syn

    w = EvidenceWriter(tmp_path, "poc_utilization", "r1")
    util = syn.utilization()
    w.write("utilization", util.to_dict("records"), source="synthetic")
    out = write_cost(SimpleNamespace(plan=load_plan(DEFAULT_PLAN), writer=w), util, None, WINDOW, set())
    assert out["currency"] == "EUR" and out["cost_total"] > 0, out
    w.write_manifest(window_start=WINDOW.start, window_end=WINDOW.end, plan_hash="0" * 64)
    ev = RunEvidence.open(w.run_dir)
    files = ev.manifest["files"]
    teams = sorted(k for k in files if k.startswith("showback-") and k != "showback-idle.csv")
    assert teams and all(len(files[k]["sha256"]) == 64 for k in teams) and "showback-idle.csv" in files
    f, _ = cost_details({"utilization": ev})
    assert {x.label: x.value for x in f}["cost_total"] == out["cost_total"]
