"""The cost attribution item's money figures, from the utilization class's ``cost_allocation`` table
(``gpupoc.costing``): the window's cost in the plan's currency, idle and waste with who held them, cost by team,
task type, pool and hour, the top waste holders and the prices with their sources. What it judged is named: every
GPU-hour priced and attributed, idle shown (checks COST-01..03 judge it); a table that is not verified (no prices,
an unpriced GPU model) shows why, and no money figure. The chart of cost over the window is ``cost_charts``."""

from __future__ import annotations

import pandas as pd

from gpupoc.report.frames import Details, Runs, load, table
from gpupoc.report.models import EvidenceTable, Figure

SOURCE = "utilization/cost_allocation"
IDLE = "__idle__"
UNALLOCATED = "__unallocated__"  # GPU-hours of pods without a namespace (gpupoc.costing.allocation)
HELD = ("workload", "shared")


def _money(label: str, value: float, currency: str) -> Figure:
    return Figure(label=label, value=round(float(value), 2), unit=currency)


def _sum(df: pd.DataFrame, key: str) -> pd.DataFrame:
    out = df.groupby(key, as_index=False, dropna=False).agg(
        gpu_hours=("gpu_hours", "sum"), cost=("cost", "sum"), waste_gpu_hours=("waste_gpu_hours", "sum"),
        waste_cost=("waste_cost", "sum"))
    return out.round({"gpu_hours": 4, "cost": 2, "waste_gpu_hours": 4, "waste_cost": 2})


def by_team(ca: pd.DataFrame) -> pd.DataFrame:
    """Per team: its own pods' cost, its part of the shared costs, the sum, its waste; idle as its own row."""
    held = ca[ca["kind"] == "workload"]
    own = _sum(held, "team").rename(columns={"cost": "own_cost"})
    spread = ca[ca["kind"] == "shared_spread"].groupby("team", as_index=False).agg(shared_cost=("cost", "sum"))
    out = own.merge(spread, on="team", how="outer").fillna({"own_cost": 0.0, "shared_cost": 0.0})
    idle = ca[ca["kind"] == "idle"]
    if len(idle):
        out = pd.concat([out, pd.DataFrame([{"team": IDLE, "gpu_hours": round(float(idle["gpu_hours"].sum()), 4),
                                             "own_cost": float(idle["cost"].sum()), "shared_cost": 0.0}])])
    out["total_cost"] = out["own_cost"] + out["shared_cost"]
    cols = ["team", "gpu_hours", "own_cost", "shared_cost", "total_cost", "waste_gpu_hours", "waste_cost"]
    return out[cols].round({"own_cost": 2, "shared_cost": 2, "total_cost": 2}).reset_index(drop=True)


def top_waste(ca: pd.DataFrame, n: int = 5) -> pd.DataFrame:
    held = ca[ca["kind"].isin(HELD)]
    w = held.groupby(["team", "pod"], as_index=False).agg(waste_gpu_hours=("waste_gpu_hours", "sum"),
                                                          waste_cost=("waste_cost", "sum"))
    w = w[w["waste_cost"] > 0].sort_values(["waste_cost", "team", "pod"], ascending=[False, True, True])
    return w.head(n).round({"waste_gpu_hours": 4, "waste_cost": 2}).reset_index(drop=True)


def by_hour(ca: pd.DataFrame) -> pd.DataFrame:
    """Per time bucket: the GPU-hours pods held and their cost, the idle GPU-hours and their cost, the waste."""
    held = _sum(ca[ca["kind"].isin(HELD)], "bucket")
    idle = ca[(ca["kind"] == "idle") & ca["bucket"].notna()] if "bucket" in ca else ca.iloc[0:0]
    idle = idle.groupby("bucket", as_index=False).agg(idle_gpu_hours=("gpu_hours", "sum"), idle_cost=("cost", "sum"))
    out = held.merge(idle, on="bucket", how="outer").fillna(0.0).sort_values("bucket")
    cols = ["bucket", "gpu_hours", "cost", "idle_gpu_hours", "idle_cost", "waste_cost"]
    return out[cols].round({"idle_gpu_hours": 4, "idle_cost": 2}).rename(columns={"bucket": "hour"})


def _prices(ca: pd.DataFrame) -> pd.DataFrame:
    p = ca[ca["gpu_model"].notna()].groupby("gpu_model", as_index=False).agg(
        price_per_hour=("price_per_hour", "first"), price_source=("price_source", "first"), currency=("currency", "first"))
    return p


def _tables(ca: pd.DataFrame) -> list[EvidenceTable]:
    held = ca[ca["kind"].isin(HELD)]
    pool = _sum(ca[ca["kind"].isin((*HELD, "idle"))].assign(
        pool=lambda d: d["pool"].where(d["kind"] != "idle", d["pool"] + " (" + IDLE + ")")), "pool")
    return [table("cost_by_team", by_team(ca), source=SOURCE),
            table("cost_by_task_type", _sum(held.fillna({"task_type": ""}), "task_type"), source=SOURCE),
            table("cost_by_pool", pool, source=SOURCE),
            table("cost_by_hour", by_hour(ca), 48, SOURCE),
            table("top_waste", top_waste(ca), source=SOURCE),
            table("prices", _prices(ca), source=SOURCE)]


def cost_details(runs: Runs) -> Details:
    """The money figures and tables; where ``cost_allocation`` is not verified, only why."""
    ev = runs.get("utilization")
    if ev is None:
        return [], []
    st = ev.status("cost_allocation")
    if not st.verified:  # the step's reason names what is missing (no prices, the unpriced model)
        why = st.args.get("detail")
        return [Figure(label="cost_not_verified", value=str(why)) if why else
                Figure(label="cost_not_collected", value=None)], []
    ca = load(runs, "utilization", "cost_allocation")
    if ca.empty:
        return [Figure(label="cost_not_verified", value="cost_allocation has no rows")], []
    cur = str(ca["currency"].iloc[0])
    kinds = ca.groupby("kind")["cost"].sum()
    held_h = float(ca[ca["kind"].isin(HELD)]["gpu_hours"].sum())
    idle_h = float(ca[ca["kind"] == "idle"]["gpu_hours"].sum())
    f = [_money("cost_total", kinds.get("workload", 0.0) + kinds.get("shared", 0.0) + kinds.get("idle", 0.0), cur),
         _money("cost_idle", kinds.get("idle", 0.0), cur), _money("cost_waste", ca["waste_cost"].sum(), cur),
         _money("cost_shared", kinds.get("shared", 0.0), cur),
         Figure(label="priced_gpu_hours", value=round(held_h + idle_h, 2), unit="unit.gpu_hours"),
         Figure(label="idle_gpu_hours", value=round(idle_h, 2), unit="unit.gpu_hours")]
    nobody = float(ca[ca["kind"].isin(HELD) & ca["team"].isin(("", UNALLOCATED))]["gpu_hours"].sum())
    if nobody:  # COST-02 fails on them; the figure says how many GPU-hours
        f.append(Figure(label="unallocated_gpu_hours", value=round(nobody, 2), unit="unit.gpu_hours", check="COST-02"))
    return f, _tables(ca)
