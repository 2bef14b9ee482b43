"""The cost attribution item's chart: a bar per time bucket, each team's cost stacked and idle on top, the parts
summing to the window's cost, the axis local to the plan's time zone, worded in English and Chinese; nothing
drawn where the cost is not verified."""

import re

import pytest

from gpupoc.evidence.reader import RunEvidence
from gpupoc.report import cost_charts
from gpupoc.report.wording import Wording
from gpupoc.validation import synthetic as syn

PART = re.compile(r'<rect [^>]*fill="(#[0-9a-f]{6})"><title>([^<]+) / ([^<]+?)(?:: |：)[^<]+</title></rect>')


def _runs(tmp_path, not_verified=None):
    tables = syn.good_tables("utilization")
    if not_verified:
        tables["cost_allocation"] = None
    d = syn.write_run(tmp_path / "evidence", "utilization", "r1", tables, not_verified=not_verified)
    return {"utilization": RunEvidence.open(d)}


def test_each_bucket_stacks_every_teams_cost_with_idle_on_top(tmp_path):
    svg = cost_charts.cost_charts(_runs(tmp_path), Wording("en"), "UTC")[cost_charts.CHART]
    parts = PART.findall(svg)
    hours = sorted({h for _, h, _ in parts})
    assert hours == ["08:00", "09:00", "10:00", "11:00"]  # one bar per hourly bucket of the window
    first = [name for _, h, name in parts if h == "08:00"]
    assert first == ["team-nlp", "team-serving", "team-vision", "idle"]  # teams in order, idle on top
    assert {colour for colour, _, name in parts if name == "idle"} == {cost_charts.IDLE_COLOUR}
    assert "one bar per 1 h, 2026-11-30 (UTC)" in svg and ">EUR<" in svg
    assert "08:00 / team-vision: 2.50</title>" in svg  # each part its amount, as the currency counts it


def test_the_bars_add_up_to_the_windows_cost(tmp_path):
    ca = syn.cost_allocation()
    pv = cost_charts._per_bucket(ca, "idle")
    assert pv.to_numpy().sum() == pytest.approx(ca[ca["kind"] != "shared_spread"]["cost"].sum())
    assert pv["idle"].sum() == pytest.approx(ca[ca["kind"] == "idle"]["cost"].sum())


def test_the_time_axis_is_local_to_the_plans_time_zone_and_worded_in_chinese(tmp_path):
    svg = cost_charts.cost_charts(_runs(tmp_path), Wording("zh"), "Asia/Shanghai")[cost_charts.CHART]
    assert {h for _, h, _ in PART.findall(svg)} == {"16:00", "17:00", "18:00", "19:00"}
    assert "闲置" in svg and "欧元" in svg and "每柱 1 小时" in svg


def test_a_cost_not_verified_draws_no_chart(tmp_path):
    runs = _runs(tmp_path, {"cost_allocation": "no price for GPU model(s) NVIDIA L40S"})
    assert cost_charts.cost_charts(runs, Wording("en")) == {}


def test_idle_without_buckets_is_left_out_of_the_bars_not_spread_over_them():
    ca = syn.cost_allocation()
    ca.loc[ca["kind"] == "idle", "bucket"] = None  # evidence priced before idle was kept per bucket
    pv = cost_charts._per_bucket(ca, "idle")
    assert "idle" not in pv.columns and len(pv) == 4
