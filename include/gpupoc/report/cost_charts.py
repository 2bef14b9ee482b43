"""The cost attribution item's chart: the window's cost per time bucket, stacked by the team that held the
GPU-hours, with the idle cost (GPU-hours no pod held) on top, in the plan's currency; the time axis local to the
plan's time zone. Drawn from ``utilization/cost_allocation`` as priced (``gpupoc.costing``); a table not verified
draws nothing (the item says why)."""

from __future__ import annotations

import pandas as pd

from gpupoc.report import charts
from gpupoc.report.cells import local_time, money
from gpupoc.report.frames import Runs, load
from gpupoc.report.pictures import duration
from gpupoc.report.wording import Wording

CHART = "cost_over_window"
IDLE = "__idle__"
IDLE_COLOUR = "#bbbbbb"
ITEM_CHARTS = {"cost_attribution": [CHART]}  # shown in the item's section, not among the other charts


def _per_bucket(ca: pd.DataFrame, idle_name: str) -> pd.DataFrame:
    """Cost per bucket (rows) and holder (columns: the teams in order, idle last)."""
    rows = ca[ca["kind"].isin(("workload", "shared", "idle")) & ca["bucket"].notna()]
    rows = rows.assign(holder=rows["team"].where(rows["kind"] != "idle", idle_name),
                       at=pd.to_datetime(rows["bucket"], utc=True, errors="coerce", format="ISO8601"))
    pv = rows.dropna(subset=["at"]).pivot_table(index="at", columns="holder", values="cost", aggfunc="sum",
                                                fill_value=0.0).sort_index()
    teams = sorted(c for c in pv.columns if c != idle_name)
    return pv[teams + ([idle_name] if idle_name in pv.columns else [])]


def cost_over_window(ca: pd.DataFrame, words: Wording, zone: str = "UTC") -> str:
    """A bar per time bucket: each team's cost stacked, idle on top."""
    title, idle = words.t("chart.cost_over_window"), words.t("legend.idle")
    pv = _per_bucket(ca, idle) if not ca.empty and "bucket" in ca else pd.DataFrame()
    if pv.empty:
        return charts.empty(title, words.t("chart.no_data"))
    stamps = [local_time(t.to_pydatetime(), zone) for t in pv.index]
    days = {s[:10] for s in stamps}
    steps = pv.index.to_series().diff().dropna().dt.total_seconds()
    width = int(steps.min()) if len(steps) else 0
    currency = str(ca["currency"].dropna().iloc[0]) if ca["currency"].notna().any() else ""
    return charts.stacked_bars(
        title, [s[11:16] if len(days) == 1 else s[5:16] for s in stamps],
        {str(c): [float(v) for v in pv[c]] for c in pv.columns}, words.t(f"currency.{currency}"),
        no_data=words.t("chart.no_data"), sep=words.t("label_sep"), colours={idle: IDLE_COLOUR},
        x_label=words.t("axis.cost_bucket", width=duration(width, words), day=min(days) if len(days) == 1 else "",
                        zone=zone), value_text=lambda v: money(v, currency))


def cost_charts(runs: Runs, words: Wording, zone: str = "UTC") -> dict[str, str]:
    """The cost chart, where the utilization class's cost was priced."""
    ev = runs.get("utilization")
    if ev is None or not ev.status("cost_allocation").verified:
        return {}
    ca = load(runs, "utilization", "cost_allocation")
    return {CHART: cost_over_window(ca, words, zone)} if not ca.empty else {}
