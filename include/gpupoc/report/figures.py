"""Figures, small tables and charts drawn from the latest evidence of each test class (aggregated first)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpupoc.report import charts, replay_figures
from gpupoc.evidence.reader import RunEvidence
from gpupoc.report.models import EvidenceTable, Figure, Stability
from gpupoc.report.wording import Wording

PRIORITY_COLOURS = ["#d62728", "#ff7f0e", "#1f77b4", "#7f7f7f", "#2ca02c", "#9467bd"]
TERMINAL = {"Succeeded", "Failed"}


def _table(title: str, df: pd.DataFrame, limit: int = 20) -> EvidenceTable:
    return EvidenceTable.from_frame(title, df, limit)


def _load(runs: dict[str, RunEvidence], tc: str, table: str) -> pd.DataFrame:
    ev = runs.get(tc)
    return ev.load(table) if ev is not None else pd.DataFrame()


def item_details(item: str, runs: dict[str, RunEvidence]) -> tuple[list[Figure], list[EvidenceTable]]:
    """The figures and tables shown with one item."""
    f: list[Figure] = []
    t: list[EvidenceTable] = []
    if item == "permission_isolation":
        ap = _load(runs, "tenant_isolation", "access_probes")
        if not ap.empty:
            bad = ap[ap["allowed"].astype(bool) != ap["expected_allowed"].astype(bool)]
            denied = int((ap["allowed"] == False).sum())  # noqa: E712 - null is neither
            f += [Figure(label="probes", value=len(ap)), Figure(label="denied", value=denied),
                  Figure(label="unexpected_outcomes", value=len(bad))]
            if len(bad):
                t.append(_table("unexpected_outcomes", bad[[c for c in ("actor_tenant", "target_namespace", "action",
                                                                         "http_status", "message") if c in bad]]))
        qs = _load(runs, "tenant_isolation", "quota_samples")
        if not qs.empty:
            agg = qs.groupby(["namespace", "resource"], as_index=False).agg(hard=("hard", "max"),
                                                                             max_used=("used", "max"))
            t.append(_table("quota_usage", agg))
    elif item == "task_records":
        total = lost = 0
        outcomes: dict[str, int] = {}
        for ev in runs.values():
            wr = ev.load("workload_runs")
            if not wr.empty and "outcome" in wr:
                total += len(wr)
                lost += int((wr["outcome"].isna() | (wr["outcome"] == "lost")).sum())
                for k, n in wr["outcome"].value_counts().items():
                    outcomes[str(k)] = outcomes.get(str(k), 0) + int(n)
        f += [Figure(label="workloads", value=total), Figure(label="lost", value=lost)]
        f += [Figure(label=f"outcome_{k}", value=n) for k, n in sorted(outcomes.items()) if k != "lost"]
        am = _load(runs, "audit_trail", "audit_matches")
        if not am.empty:
            f.append(Figure(label="audit_matched", value=f"{int(am['matched'].sum())}/{len(am)}"))
            t.append(_table("audit_matches", am[[c for c in ("ledger_action", "actor", "verb", "resource", "namespace",
                                                             "matched", "delay_seconds") if c in am]]))
        art = _load(runs, "audit_trail", "artifacts")
        if not art.empty:
            t.append(_table("artifacts", art))
    elif item == "queue_explainability":
        ex = _load(runs, "queue_congestion", "explanations")
        if not ex.empty:
            need = ex[ex["explained"].notna()]
            share = round(float(need["explained"].astype(bool).mean()), 3) if len(need) else None
            f += [Figure(label="waits", value=len(need)), Figure(label="explained_share", value=share)]
            cols = [c for c in ("pod", "platform_reason", "platform_message", "reconstructed_bottleneck", "ahead_count",
                                "explained") if c in ex]
            t.append(_table("explanations", need[cols], 10))
            if "expected_wait_seconds" in ex:  # the queue in the order it was served, expected against actual
                order = ex.sort_values(["wait_seconds", "pod"], na_position="last")
                cols = [c for c in ("pod", "priority_class", "gpus", "reconstructed_bottleneck", "expected_wait_seconds",
                                    "wait_seconds", "platform_reason") if c in order]
                t.append(_table("queue_order", order[cols], 40))
        wr = _load(runs, "queue_congestion", "workload_runs")
        if not wr.empty and "outcome" in wr:
            moved = wr[wr["outcome"].isin(["preempted", "evicted"])]
            f.append(Figure(label="preempted_or_evicted", value=len(moved)))
            if len(moved):
                t.append(_table("preemptions", moved[[c for c in ("pod", "priority_class", "outcome", "outcome_by",
                                                                  "outcome_message", "outcome_at") if c in moved]]))
    elif item == "failure_evidence":
        fr = _load(runs, "fault_recovery", "failure_records")
        if not fr.empty:
            f += [Figure(label="scenarios", value=len(fr)),
                  Figure(label="logs_readable", value=f"{int((fr['logs_readable'] == True).sum())}/{len(fr)}"),  # noqa: E712
                  Figure(label="max_gpu_release", value=_num(fr["gpu_release_seconds"].max()), unit="s")]
            gaps = fr[(fr["logs_readable"] != True) | fr["gpu_release_seconds"].isna() | fr["events"].isna()  # noqa: E712
                      | (fr["verified"] != True)]  # noqa: E712
            if len(gaps):
                t.append(_table("incomplete_records", gaps[[c for c in (
                    "scenario", "logs_readable", "events", "alerts", "gpu_release_seconds", "verified", "reason")
                    if c in gaps]]))
    elif item in ("utilization_reports", "cost_attribution"):
        ut = _load(runs, "utilization", "utilization")
        if not ut.empty:
            by = ut.groupby("namespace", as_index=False).agg(
                allocated_gpu_hours=("allocated_gpu_hours", "sum"), used_gpu_hours=("used_gpu_hours", "sum"),
                util_avg=("util_avg", "mean"), mem_mib_avg=("mem_mib_avg", "mean"))
            if item == "utilization_reports":
                f += [Figure(label="teams", value=int(ut["namespace"].nunique())),
                      Figure(label="pools", value=int(ut["pool"].nunique())),
                      Figure(label="buckets", value=int(ut["bucket"].nunique()))]
                tt = ut.groupby(["pool", "task_type"], as_index=False).agg(util_avg=("util_avg", "mean"),
                                                                           util_p95=("util_p95", "max"))
                t += [_table("by_team", by), _table("by_pool_task_type", tt)]
            else:
                alloc, used = float(ut["allocated_gpu_hours"].sum()), float(ut["used_gpu_hours"].sum())
                f += [Figure(label="allocated_gpu_hours", value=round(alloc, 2), unit="GPU-h"),
                      Figure(label="used_gpu_hours", value=round(used, 2), unit="GPU-h")]
                t.append(_table("by_team", by[["namespace", "allocated_gpu_hours", "used_gpu_hours"]]))
    elif item == "scheduling_policy":
        wr = _load(runs, "queue_congestion", "workload_runs")
        if not wr.empty:
            g = wr.groupby(["priority_class", "priority"], as_index=False).agg(
                workloads=("pod", "count"), wait_p50=("wait_seconds", "median"), wait_max=("wait_seconds", "max"))
            t.append(_table("wait_by_priority", g.sort_values("priority", ascending=False)))
            if "attempt" in wr:
                f.append(Figure(label="resubmitted", value=int((wr["attempt"].fillna(1) > 1).sum())))
        po = runs.get("queue_congestion")
        po_path = po.run_dir / "validation" / "derived" / "priority_order.parquet" if po else None
        if po_path and po_path.is_file():
            overtaken = int(pd.read_parquet(po_path)["overtaken_by_lower"].sum())
            f.append(Figure(label="overtaken_by_lower", value=overtaken))
        rf, rt = replay_figures.item_details(item, runs)  # a replayed history's waits beside the platform's
        f, t = f + rf, t + rt
    elif item == "monitoring_integration":
        fr = _load(runs, "fault_recovery", "failure_records")
        if not fr.empty and "alerts" in fr:
            f.append(Figure(label="alerts", value=int(pd.to_numeric(fr["alerts"], errors="coerce").fillna(0).sum())))
        ut = _load(runs, "utilization", "utilization")
        if not ut.empty:
            f.append(Figure(label="gpus_with_metrics", value=int(ut["gpu_uuid"].nunique())))
    return f, t


def _num(v: object) -> float | None:
    try:
        x = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if x != x else round(x, 2)


def _secs(s: pd.Series, t0: pd.Timestamp) -> pd.Series:
    return (pd.to_datetime(s, utc=True, errors="coerce") - t0).dt.total_seconds()


def failure_records_table(runs: dict[str, RunEvidence]) -> EvidenceTable | None:
    fr = _load(runs, "fault_recovery", "failure_records")
    if fr.empty:
        return None
    cols = [c for c in ("scenario", "trigger", "platform_behaviour", "user_visible", "operator_visible", "recovery",
                        "logs_readable", "events", "airflow_retries", "platform_restarts", "alerts",
                        "gpu_release_seconds") if c in fr]
    return _table("failure_records", fr[cols], 50)


def build_charts(runs: dict[str, RunEvidence], words: Wording) -> dict[str, str]:
    """Every chart the report shows, from aggregated evidence, worded in the report's language."""
    out: dict[str, str] = {}
    titles = {k[len("chart."):]: v for k, v in words.table.items() if k.startswith("chart.")}
    waiting = words.t("legend.waiting")
    wr = _load(runs, "queue_congestion", "workload_runs")
    if not wr.empty:
        t0 = pd.to_datetime(wr["released_at"].fillna(wr["submitted_at"]), utc=True).min()
        wr = wr.assign(r=_secs(wr["released_at"].fillna(wr["submitted_at"]), t0), s=_secs(wr["scheduled_at"], t0),
                       e=_secs(wr["finished_at"], t0)).sort_values(["priority", "r"], ascending=[False, True])
        classes = list(dict.fromkeys(wr["priority_class"]))
        colour = {c: PRIORITY_COLOURS[i % len(PRIORITY_COLOURS)] for i, c in enumerate(classes)}
        rows = []
        for r in wr.itertuples(index=False):
            end_wait = r.s if r.s == r.s else r.e if r.e == r.e else r.r
            segs = [(r.r, end_wait, "#cccccc", f"{r.pod}: {waiting} {end_wait - r.r:.0f}s")]
            if r.s == r.s and r.e == r.e:
                segs.append((r.s, r.e, colour[r.priority_class],
                             f"{r.pod} {r.priority_class}: {words.t('legend.running')}"))
            rows.append((f"{r.pod}", segs))
        out["queue_timeline"] = charts.timeline(titles["queue_timeline"], rows, {waiting: "#cccccc", **colour})
        g = wr.groupby(["priority_class", "gpus"])["wait_seconds"].median().unstack("gpus")
        g = g.reindex(classes)
        out["wait_by_priority"] = charts.grouped_bars(
            titles["wait_by_priority"], [str(c) for c in g.index],
            {f"{int(k)} GPU": [float(v) for v in g[k]] for k in g.columns}, "s")
    ut = _load(runs, "utilization", "utilization")
    if not ut.empty:
        ut = ut.assign(hour=pd.to_datetime(ut["bucket"], utc=True).dt.floor("h"))
        pv = ut.groupby(["namespace", "hour"])["util_avg"].mean().unstack("hour").sort_index(axis=1)
        out["utilization_heatmap"] = charts.heatmap(
            titles["utilization_heatmap"], [str(i) for i in pv.index], [c.strftime("%m-%d %H") for c in pv.columns],
            [[None if v != v else float(v) for v in row] for row in pv.to_numpy()])
        by = ut.groupby("namespace")[["allocated_gpu_hours", "used_gpu_hours"]].sum()
        out["allocated_vs_used"] = charts.grouped_bars(
            titles["allocated_vs_used"], [str(i) for i in by.index],
            {words.t("legend.allocated"): by["allocated_gpu_hours"].tolist(),
             words.t("legend.used"): by["used_gpu_hours"].tolist()}, "GPU-h")
    out.update(replay_figures.replay_charts(runs, words))
    fr = _load(runs, "fault_recovery", "failure_records")
    if not fr.empty:
        out["failure_timeline"] = _failure_timeline(fr, _load(runs, "fault_recovery", "workload_runs"), words)
    return out


FAULT_COLOURS = {"pending": "#cccccc", "running": "#2ca02c", "failed": "#d62728", "gpu_held": "#ff7f0e"}


def _failure_timeline(fr: pd.DataFrame, fw: pd.DataFrame, words: Wording) -> str:
    """Per scenario: pending, running, the end (failed), then how long the GPUs stayed held (never: to the edge)."""
    release = {str(r.scenario): _num(r.gpu_release_seconds) for r in fr.itertuples(index=False)}
    legend = {words.t(f"legend.{k}"): v for k, v in FAULT_COLOURS.items()}

    def held(rel: float | None) -> str:
        return words.t("tip.never_released") if rel is None else words.t("tip.released_after", seconds=rel)

    rows: list[tuple[str, list[tuple[float, float, str, str]]]] = []
    if not fw.empty and "scenario" in fw and fw["scenario"].notna().any():
        fw = fw[fw["scenario"].notna()]
        t0 = pd.to_datetime(fw["submitted_at"], utc=True).min()
        fw = fw.assign(a=_secs(fw["submitted_at"], t0), b=_secs(fw["started_at"], t0), e=_secs(fw["finished_at"], t0))
        edge = float(np.nanmax(fw[["a", "b", "e"]].to_numpy())) + max([v for v in release.values() if v] or [10])
        for r in fw.itertuples(index=False):
            segs, end = [], r.e if r.e == r.e else edge
            start = r.b if r.b == r.b else end
            segs.append((r.a, start, FAULT_COLOURS["pending"], f"{r.pod}: {words.t('legend.pending')} "
                                                                 f"{start - r.a:.0f}s"))
            if r.b == r.b:
                colour = FAULT_COLOURS["failed"] if r.phase == "Failed" else FAULT_COLOURS["running"]
                segs.append((r.b, end, colour, f"{r.pod}: {words.t('legend.running')}, {r.phase} {r.reason or ''}"))
            rel = release.get(str(r.scenario))
            held_to = edge if rel is None else end + rel
            segs.append((end, max(held_to, end), FAULT_COLOURS["gpu_held"], f"{r.scenario}: {held(rel)}"))
            rows.append((f"{r.scenario}", segs))
    else:
        edge = max([v for v in release.values() if v] or [10]) * 1.5
        for sc, rel in release.items():
            rows.append((sc, [(0.0, edge if rel is None else rel, FAULT_COLOURS["gpu_held"], f"{sc}: {held(rel)}")]))
    return charts.timeline(words.t("chart.failure_timeline"), rows, legend)


def stability_charts(stab: Stability, table: dict[str, str]) -> dict[str, str]:
    """Per test class, run after run: workload success rate and failed checks."""
    by: dict[str, list] = {}
    for r in stab.runs:
        by.setdefault(r.test_class, []).append(r)
    n = max((len(v) for v in by.values()), default=0)
    if n < 2:
        return {}
    labels = [f"#{i + 1}" for i in range(n)]
    pad = lambda vals: vals + [None] * (n - len(vals))  # noqa: E731
    return {
        "stability": charts.lines(table["chart.stability"], labels,
                                  {tc: pad([r.success_rate for r in rs]) for tc, rs in by.items()
                                   if any(r.success_rate is not None for r in rs)}, y_max=1.0),
        "failed_checks": charts.lines(table["chart.failed_checks"], labels,
                                      {tc: pad([r.checks_failed if r.validated else None for r in rs])
                                       for tc, rs in by.items()}),
    }
