"""The figures put side by side: each candidate's own report figures as they are, and the figures the
comparison names, read from the same evidence tables through the report's own view (``report.figures.load``).

A figure the evidence does not hold is ``None`` ("not measured"), never zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd

from gpupoc.compare.models import FigureRow, FigureValue
from gpupoc.report.figures import load
from gpupoc.report.models import Report

Runs = dict
UNITS = {"unit.seconds": "s", "unit.gpu_hours": "GPU-h", "unit.percent": "%", "unit.ms": "ms"}


@dataclass(frozen=True)
class Candidate:
    """What the figures read of one candidate: its label, its own report and the runs that report judged."""

    label: str
    report: Report
    runs: Runs


def _report_value(c: Candidate, item: str, label: str) -> FigureValue:
    for it in c.report.items:
        if it.id == item:
            for f in it.figures:
                if f.label == label:
                    return FigureValue(label=c.label, value=f.value, count=f.count, out_of=f.out_of)
    return FigureValue(label=c.label)


def report_figures(cands: list[Candidate]) -> list[FigureRow]:
    """Every figure of every item of the candidates' reports, one row per item and figure label."""
    keys: dict[tuple[str, str], str] = {}
    for c in cands:
        for it in c.report.items:
            for f in it.figures:
                keys.setdefault((it.id, f.label), f.unit)
    return [FigureRow(id=f"{item}:{label}", name=f"{item}: {label.replace('_', ' ')}", unit=UNITS.get(u, u),
                      source="report", values=[_report_value(c, item, label) for c in cands])
            for (item, label), u in keys.items()]


def _num(v: object) -> float | None:
    try:
        x = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if x != x else round(x, 2)


def wait_stats(wr: pd.DataFrame) -> dict[str, dict[str, float | None]]:
    """Per priority class (highest first): the median, 95th percentile and longest wait, in seconds; the
    median and the longest as the report's wait-by-priority table has them."""
    if wr.empty or "wait_seconds" not in wr or "priority_class" not in wr:
        return {}
    order = wr.sort_values("priority", ascending=False) if "priority" in wr else wr
    out = {}
    for pc in dict.fromkeys(order["priority_class"].dropna()):
        w = wr.loc[wr["priority_class"] == pc, "wait_seconds"].dropna()
        out[str(pc)] = {"p50": _num(w.median()), "p95": _num(w.quantile(0.95)), "max": _num(w.max())}
    return out


def makespan(wr: pd.DataFrame) -> float | None:
    """From the wave's release (else its first submission) to its last workload's end, in seconds."""
    if wr.empty or "finished_at" not in wr:
        return None
    start = wr["released_at"].dropna() if "released_at" in wr else pd.Series(dtype=object)
    if start.empty:
        start = wr["submitted_at"].dropna() if "submitted_at" in wr else start
    end = wr["finished_at"].dropna()
    if start.empty or end.empty:
        return None
    return _num((pd.to_datetime(end).max() - pd.to_datetime(start).min()).total_seconds())


def allocated_while_waiting(runs: Runs) -> float | None:
    """The share of the cluster's GPUs held by running workloads at the snapshots where a workload waited."""
    qs, wr = load(runs, "queue_congestion", "queue_snapshots"), load(runs, "queue_congestion", "workload_runs")
    info = load(runs, "queue_congestion", "platform_info")
    cap = info.loc[info["key"] == "gpus.allocatable", "value"] if not info.empty and "key" in info else []
    if qs.empty or wr.empty or len(cap) == 0 or "phase" not in qs or not _num(cap.iloc[0]):
        return None
    gpus = wr.drop_duplicates("pod").set_index("pod")["gpus"].to_dict()
    qs = qs.assign(gpus=qs["pod"].map(gpus).fillna(0))
    ratios = [float(g.loc[g["phase"] == "Running", "gpus"].sum()) / float(cap.iloc[0])
              for _, g in qs.groupby("ts") if (g["phase"] == "Pending").any()]
    return round(sum(ratios) / len(ratios), 3) if ratios else None


def jain_index(runs: Runs) -> float | None:
    """Jain's fairness index over the tenants' shares weighted by what they are owed (share / fair share):
    1 when every tenant got its weighted share, 1/n when one got everything."""
    qs = load(runs, "tenant_isolation", "queue_shares")
    if qs.empty or "share" not in qs or "fair_share" not in qs:
        return None
    x = (qs["share"] / qs["fair_share"]).where(qs["fair_share"] > 0).dropna()
    if x.empty or float((x ** 2).sum()) == 0:
        return None
    return round(float(x.sum()) ** 2 / (len(x) * float((x ** 2).sum())), 3)


def _max_of(runs: Runs, tc: str, table: str, column: str, where: Callable[[pd.DataFrame], pd.Series] | None = None):
    df = load(runs, tc, table)
    if df.empty or column not in df:
        return None
    if where is not None:
        df = df[where(df)]
    return _num(df[column].max()) if not df.empty else None


def cost_per_success(runs: Runs) -> float | None:
    """The utilization window's cost (idle included) over the class's workloads that succeeded; None without a
    verified cost or a success."""
    ev = runs.get("utilization")
    if ev is None or not ev.status("cost_allocation").verified:
        return None
    ca, wr = load(runs, "utilization", "cost_allocation"), load(runs, "utilization", "workload_runs")
    done = int((wr["outcome"] == "succeeded").sum()) if "outcome" in wr else 0
    total = float(ca[ca["kind"].isin(("workload", "shared", "idle"))]["cost"].sum()) if "kind" in ca else 0.0
    return _num(total / done) if done and total else None


# (id, what it measures, unit, source): a report figure ("report", item, label) or a reading of the evidence.
NAMED: list[tuple[str, str, str, tuple]] = [
    ("makespan", "wave makespan (release to last end)", "s", ("evidence", "queue_congestion/workload_runs",
                                                                 lambda r: makespan(load(r, "queue_congestion", "workload_runs")))),
    ("allocated_while_waiting", "GPU allocation ratio while work waited", "share",
     ("evidence", "queue_congestion/queue_snapshots", allocated_while_waiting)),
    ("waits_explained", "share of waits explained", "", ("report", "queue_explainability", "waits_explained")),
    ("preemptions", "preemptions and evictions", "", ("report", "queue_explainability", "preempted_or_evicted")),
    ("resubmissions", "resubmissions", "", ("report", "scheduling_policy", "resubmitted")),
    ("jain_index", "Jain's fairness index over weighted shares", "", ("evidence", "tenant_isolation/queue_shares",
                                                                       jain_index)),
    ("reclaim_seconds", "reclaim time (longest)", "s", ("evidence", "tenant_isolation/reclaim_probes",
                                                        lambda r: _max_of(r, "tenant_isolation", "reclaim_probes",
                                                                          "reclaim_seconds"))),
    ("gpu_release", "GPU release after failures (longest)", "s", ("report", "failure_evidence", "max_gpu_release")),
    ("node_failure_recovery", "node failure: GPUs released after the node failed", "s",
     ("evidence", "fault_recovery/failure_records",
      lambda r: _max_of(r, "fault_recovery", "failure_records", "gpu_release_seconds",
                        lambda df: df["scenario"].astype(str).str.contains("node")))),
    ("audit_coverage", "audit coverage (requests matched in the audit log)", "",
     ("report", "task_records", "audit_matched")),
    ("allocated_gpu_hours", "GPU-hours allocated", "GPU-h", ("report", "cost_attribution", "allocated_gpu_hours")),
    ("used_gpu_hours", "GPU-hours used", "GPU-h", ("report", "cost_attribution", "used_gpu_hours")),
    ("cost", "cost of the utilization window, every GPU-hour priced (the plan's prices)", "plan currency",
     ("report", "cost_attribution", "cost_total")),
    ("cost_idle", "idle cost of the utilization window", "plan currency", ("report", "cost_attribution", "cost_idle")),
    ("cost_per_success", "cost per successful workload of the utilization class", "plan currency",
     ("evidence", "utilization/cost_allocation", lambda r: cost_per_success(r))),
    ("serving_slo", "online services that met their SLO through the congestion wave", "",
     ("report", "scheduling_policy", "services_slo_held")),
    ("serving_availability", "lowest availability of an online service through the congestion wave", "%",
     ("report", "scheduling_policy", "services_availability_min")),
    ("serving_replacement", "node failure under a serving replica: replacement ready after (longest)", "s",
     ("report", "failure_evidence", "max_service_replacement")),
]


def _waits(cands: list[Candidate]) -> list[FigureRow]:
    stats = {c.label: wait_stats(load(c.runs, "queue_congestion", "workload_runs")) for c in cands}
    classes = list(dict.fromkeys(pc for s in stats.values() for pc in s))
    return [FigureRow(id=f"wait_{stat}:{pc}", name=f"queue wait {stat} of {pc}", unit="s",
                      source="evidence: queue_congestion/workload_runs",
                      values=[FigureValue(label=c.label, value=stats[c.label].get(pc, {}).get(stat)) for c in cands])
            for pc in classes for stat in ("p50", "p95", "max")]


def named_figures(cands: list[Candidate]) -> list[FigureRow]:
    """The figures a procurement reads side by side, in a fixed order; waits per priority class first."""
    rows = _waits(cands)
    for fid, name, unit, how in NAMED:
        if how[0] == "report":
            values = [_report_value(c, how[1], how[2]) for c in cands]
            rows.append(FigureRow(id=fid, name=name, unit=unit, source=f"report: {how[1]}", values=values))
        else:
            rows.append(FigureRow(id=fid, name=name, unit=unit, source=f"evidence: {how[1]}",
                                  values=[FigureValue(label=c.label, value=how[2](c.runs)) for c in cands]))
    return rows


def wait_series(c: Candidate) -> list[float]:
    """The candidate's congestion waits, sorted (its wait CDF)."""
    wr = load(c.runs, "queue_congestion", "workload_runs")
    if wr.empty or "wait_seconds" not in wr:
        return []
    return sorted(float(v) for v in wr["wait_seconds"].dropna())


def occupancy_series(c: Candidate) -> list[tuple[float, float]]:
    """(seconds since the first snapshot, GPUs held by running workloads) at each congestion snapshot."""
    qs, wr = load(c.runs, "queue_congestion", "queue_snapshots"), load(c.runs, "queue_congestion", "workload_runs")
    if qs.empty or wr.empty or "phase" not in qs or "ts" not in qs or "gpus" not in wr:
        return []
    gpus = wr.drop_duplicates("pod").set_index("pod")["gpus"].to_dict()
    qs = qs.assign(gpus=qs["pod"].map(gpus).fillna(0), ts=pd.to_datetime(qs["ts"]))
    t0 = qs["ts"].min()
    held = qs[qs["phase"] == "Running"].groupby("ts")["gpus"].sum().reindex(sorted(qs["ts"].unique()), fill_value=0)
    return [(round((ts - t0).total_seconds(), 2), float(v)) for ts, v in held.items()]
