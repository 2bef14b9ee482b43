"""Cost by dimension, top waste holders, and the showback per team under OpenCost's allocation columns."""

from __future__ import annotations

import csv
import io

import pytest

from gpupoc.costing.allocation import IDLE, PoolCapacity, UsageRow, allocate
from gpupoc.costing.prices import Prices
from gpupoc.costing.showback import SHOWBACK_COLUMNS, by, showback, to_csv, top_waste

H100 = "NVIDIA H100 80GB HBM3"
PRICES = Prices.model_validate({"currency": "USD", "gpu_hour": {H100: {"per_hour": 2.0, "source": "t"}}})


def alloc():
    rows = [UsageRow("a", "p1", "training", H100, "h0", 1.0, 0.25, "training"),
            UsageRow("a", "p1", "training", H100, "h1", 1.0, 1.0, "training"),
            UsageRow("b", "p2", "training", H100, "h0", 1.0, 0.5, "inference"),
            UsageRow("svc", "r1", "training", H100, "h0", 1.0, 1.0, "inference", shared=True)]
    return allocate(rows, [PoolCapacity("training", H100, 8.0)], PRICES)


def test_cost_sums_by_team_and_by_hour():
    assert {r["team"]: r["cost"] for r in by(alloc(), "team")} == {"a": 4.0, "b": 2.0, "svc": 2.0}
    assert {r["hour"]: r["cost"] for r in by(alloc(), "hour")} == {"h0": 6.0, "h1": 2.0}


def test_top_waste_holders_are_ordered_by_the_cost_of_what_they_left_unused():
    top = top_waste(alloc())
    assert [(r["team"], r["pod"], r["waste_cost"]) for r in top] == [("a", "p1", 1.5), ("b", "p2", 1.0)]


def test_showback_spreads_the_shared_pool_and_keeps_idle_apart():
    rows = {r["name"]: r for r in showback(alloc(), "s", "e", 60)}
    assert set(rows) == {"a", "b", IDLE}
    assert rows["a"]["sharedCost"] == pytest.approx(2.0 * 4 / 6, abs=1e-4)
    assert rows["a"]["totalCost"] == pytest.approx(4.0 + 2.0 * 4 / 6, abs=1e-4)
    assert rows["a"]["totalEfficiency"] == pytest.approx(1.25 / 2.0)
    assert rows[IDLE]["gpuCost"] == pytest.approx(8.0)  # 8 GPU-h offered, 4 charged
    total = sum(r["totalCost"] for r in rows.values())
    assert total == pytest.approx(16.0, abs=1e-3)  # every GPU-hour of the pool priced and attributed


def test_the_csv_carries_opencosts_column_names_and_the_currency():
    text = to_csv(showback(alloc(), "s", "e", 60))
    got = list(csv.DictReader(io.StringIO(text)))
    assert list(got[0]) == SHOWBACK_COLUMNS
    assert {"gpuHours", "gpuCost", "sharedCost", "totalCost"} <= set(got[0])
    assert {r["currency"] for r in got} == {"USD"}
