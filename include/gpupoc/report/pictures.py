"""Every chart the report shows, from aggregated evidence, worded in the report's language.

Each time axis says where it starts (the wave's release, in the plan's time zone) and in what unit; rows
carry full names; a preempted attempt is drawn as preempted; a legend lists only what its chart draws; the
utilization heatmap's columns are as fine as the data's time buckets allow.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpupoc.evidence.reader import RunEvidence
from gpupoc.report import charts, replay_figures
from gpupoc.report.cells import local_time
from gpupoc.report.figures import load
from gpupoc.report.models import Stability
from gpupoc.report.wording import Wording

PRIORITY_COLOURS = ["#d62728", "#ff7f0e", "#1f77b4", "#7f7f7f", "#2ca02c", "#9467bd"]
WAITING, PREEMPTED = "#cccccc", "#111111"
FAULT_COLOURS = {"pending": "#cccccc", "running": "#2ca02c", "failed": "#d62728", "gpu_held": "#ff7f0e"}
BUCKETS = ["1min", "5min", "15min", "1h", "6h", "1D"]  # wider heatmap columns, finest first
MAX_COLUMNS = 48


def _secs(s: pd.Series, t0: pd.Timestamp) -> pd.Series:
    return (pd.to_datetime(s, utc=True, errors="coerce") - t0).dt.total_seconds()


def _axis(words: Wording, t0: pd.Timestamp, zone: str, what: str) -> str:
    """"seconds after <what> (<local time>)"."""
    return words.t("axis.seconds_after", what=words.t(what), at=local_time(t0.to_pydatetime(), zone))


def _attempt_label(r) -> str:
    attempt = getattr(r, "attempt", None)
    return f"{r.pod} #{int(attempt)}" if attempt == attempt and attempt and int(attempt) > 1 else str(r.pod)


def queue_timeline(wr: pd.DataFrame, words: Wording, zone: str) -> str:
    """One row per attempt: waiting in grey, running in its priority's colour, a preempted run in black."""
    start = wr["released_at"].fillna(wr["submitted_at"])
    t0 = pd.to_datetime(start, utc=True).min()
    item = wr["item"].fillna(wr["pod"]) if "item" in wr else wr["pod"]
    wr = wr.assign(r=_secs(start, t0), s=_secs(wr["scheduled_at"], t0), e=_secs(wr["finished_at"], t0), item=item)
    first = wr.groupby("item")["r"].transform("min")  # an item's attempts stay together, in order
    wr = wr.assign(first=first, n=wr["attempt"].fillna(1) if "attempt" in wr else 1).sort_values(
        ["priority", "first", "item", "n"], ascending=[False, True, True, True])
    classes = list(dict.fromkeys(wr["priority_class"]))
    colour = {c: PRIORITY_COLOURS[i % len(PRIORITY_COLOURS)] for i, c in enumerate(classes)}
    waiting, used, sep = words.t("legend.waiting"), set(), words.t("label_sep")
    rows = []
    for r in wr.itertuples(index=False):
        end_wait = r.s if r.s == r.s else r.e if r.e == r.e else r.r
        segs = [(r.r, end_wait, WAITING, f"{r.pod}{sep}{waiting} {round(end_wait - r.r)} {words.t('unit.seconds')}")]
        used.add(waiting)
        if r.s == r.s and r.e == r.e:
            preempted = getattr(r, "outcome", None) == "preempted"
            name = words.t("legend.preempted") if preempted else r.priority_class
            segs.append((r.s, r.e, PREEMPTED if preempted else colour[r.priority_class],
                         f"{r.pod} {r.priority_class}{sep}"
                         f"{words.t('legend.preempted' if preempted else 'legend.running')}"))
            used.add(name)
        rows.append((_attempt_label(r), segs))
    legend = {waiting: WAITING, **colour, words.t("legend.preempted"): PREEMPTED}
    return charts.timeline(words.t("chart.queue_timeline"), rows, {k: v for k, v in legend.items() if k in used},
                           _axis(words, t0, zone, "axis.wave_release"), no_data=words.t("chart.no_data"))


def wait_by_priority(wr: pd.DataFrame, words: Wording) -> str:
    classes = list(dict.fromkeys(wr.sort_values("priority", ascending=False)["priority_class"]))
    g = wr.groupby(["priority_class", "gpus"])["wait_seconds"].median().unstack("gpus").reindex(classes)
    return charts.grouped_bars(words.t("chart.wait_by_priority"), [str(c) for c in g.index],
                               {words.t("legend.gpus", n=int(k)): [float(v) for v in g[k]] for k in g.columns},
                               words.t("axis.median_wait"), no_data=words.t("chart.no_data"), sep=words.t("label_sep"))


def _columns(times: pd.Series) -> tuple[pd.Series, int]:
    """The heatmap's columns: the data's own time buckets when there are at most MAX_COLUMNS of them, else the
    finest wider bucket that keeps within MAX_COLUMNS; with the column width in seconds."""
    own = times.drop_duplicates().sort_values()
    if len(own) <= MAX_COLUMNS:
        steps = own.diff().dropna().dt.total_seconds()
        return times, int(steps.min()) if len(steps) else 0
    for freq in BUCKETS:
        if times.dt.floor(freq).nunique() <= MAX_COLUMNS:
            return times.dt.floor(freq), int(pd.Timedelta(freq).total_seconds())
    return times.dt.floor(BUCKETS[-1]), int(pd.Timedelta(BUCKETS[-1]).total_seconds())


def utilization_heatmap(ut: pd.DataFrame, words: Wording, zone: str) -> str:
    cols, width = _columns(pd.to_datetime(ut["bucket"], utc=True))
    ut = ut.assign(col=cols)
    pv = ut.groupby(["namespace", "col"])["util_avg"].mean().unstack("col").sort_index(axis=1)
    stamps = [local_time(c.to_pydatetime(), zone) for c in pv.columns]
    days = {s[:10] for s in stamps}
    labels = [s[11:] if len(days) == 1 else s[5:16] for s in stamps]  # the day once, in the axis label
    return charts.heatmap(words.t("chart.utilization_heatmap"), [str(i) for i in pv.index], labels,
                          [[None if v != v else float(v) for v in row] for row in pv.to_numpy()],
                          x_label=words.t("axis.bucket", width=duration(width, words),
                                          day=min(days) if len(days) == 1 else "", zone=zone),
                          scale_label=words.t("axis.utilization"), no_data=words.t("chart.no_data"),
                          sep=words.t("label_sep"))


def duration(seconds: int, words: Wording) -> str:
    """A bucket's width in words: "1 h", "15 min"."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds and seconds % size == 0:
            return words.t(f"duration.{unit}", n=seconds // size)
    return words.t("duration.second", n=seconds)


def allocated_vs_used(ut: pd.DataFrame, words: Wording) -> str:
    by = ut.groupby("namespace")[["allocated_gpu_hours", "used_gpu_hours"]].sum()
    return charts.grouped_bars(words.t("chart.allocated_vs_used"), [str(i) for i in by.index],
                               {words.t("legend.allocated"): by["allocated_gpu_hours"].tolist(),
                                words.t("legend.used"): by["used_gpu_hours"].tolist()}, words.t("unit.gpu_hours"),
                               no_data=words.t("chart.no_data"), sep=words.t("label_sep"))


def build_charts(runs: dict[str, RunEvidence], words: Wording, zone: str = "UTC") -> dict[str, str]:
    """Every chart the report shows, from aggregated evidence, worded in the report's language."""
    out: dict[str, str] = {}
    wr = load(runs, "queue_congestion", "workload_runs")
    if not wr.empty:
        out["queue_timeline"] = queue_timeline(wr, words, zone)
        out["wait_by_priority"] = wait_by_priority(wr, words)
    ut = load(runs, "utilization", "utilization")
    if not ut.empty:
        out["utilization_heatmap"] = utilization_heatmap(ut, words, zone)
        out["allocated_vs_used"] = allocated_vs_used(ut, words)
    out.update(replay_figures.replay_charts(runs, words))
    fr = load(runs, "fault_recovery", "failure_records")
    if not fr.empty:
        out["failure_timeline"] = failure_timeline(fr, load(runs, "fault_recovery", "workload_runs"), words, zone)
    return out


def _fault_rows(fw: pd.DataFrame, release: dict[str, float | None], words: Wording, held) -> tuple[list, set, pd.Timestamp]:
    """Per scenario's workload: pending, running (failed in red), then the GPUs held after its end."""
    t0 = pd.to_datetime(fw["submitted_at"], utc=True).min()
    fw = fw.assign(a=_secs(fw["submitted_at"], t0), b=_secs(fw["started_at"], t0), e=_secs(fw["finished_at"], t0))
    edge = float(np.nanmax(fw[["a", "b", "e"]].to_numpy())) + max([v for v in release.values() if v] or [10])
    rows, used, sep = [], set(), words.t("label_sep")
    for r in fw.itertuples(index=False):
        end = r.e if r.e == r.e else edge
        start = r.b if r.b == r.b else end
        segs = [(r.a, start, FAULT_COLOURS["pending"],
                 f"{r.pod}{sep}{words.t('legend.pending')} {round(start - r.a)} {words.t('unit.seconds')}")]
        used.add("pending")
        if r.b == r.b:
            state = "failed" if r.phase == "Failed" else "running"
            segs.append((r.b, end, FAULT_COLOURS[state], f"{r.pod}{sep}{words.t('legend.' + state)} {r.reason or ''}"))
            used.add(state)
        rel = release.get(str(r.scenario))
        held_to = edge if rel is None else end + rel
        if held_to > end:
            segs.append((end, held_to, FAULT_COLOURS["gpu_held"],
                         f"{words.t(f'fault.{r.scenario}')}{sep}{held(rel)}"))
            used.add("gpu_held")
        rows.append((words.t(f"fault.{r.scenario}"), segs))
    return rows, used, t0


def failure_timeline(fr: pd.DataFrame, fw: pd.DataFrame, words: Wording, zone: str = "UTC") -> str:
    """Per scenario: pending, running, the end (failed), then how long the GPUs stayed held (never: to the edge)."""
    release = {str(r.scenario): _num(r.gpu_release_seconds) for r in fr.itertuples(index=False)}

    def held(rel: float | None) -> str:
        return words.t("tip.never_released") if rel is None else words.t("tip.released_after", seconds=rel)

    if not fw.empty and "scenario" in fw and fw["scenario"].notna().any():
        rows, used, t0 = _fault_rows(fw[fw["scenario"].notna()], release, words, held)
        axis = _axis(words, t0, zone, "axis.first_submission")
    else:
        edge = max([v for v in release.values() if v] or [10]) * 1.5
        sep = words.t("label_sep")
        rows = [(words.t(f"fault.{sc}"), [(0.0, edge if rel is None else rel, FAULT_COLOURS["gpu_held"],
                                           f"{words.t(f'fault.{sc}')}{sep}{held(rel)}")])
                for sc, rel in release.items()]
        used, axis = {"gpu_held"}, words.t("axis.seconds_after_failure")
    legend = {words.t(f"legend.{k}"): v for k, v in FAULT_COLOURS.items() if k in used}
    return charts.timeline(words.t("chart.failure_timeline"), rows, legend, axis, no_data=words.t("chart.no_data"))


def _num(v: object) -> float | None:
    try:
        x = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if x != x else round(x, 2)


def stability_charts(stab: Stability, words: Wording) -> dict[str, str]:
    """Per test class, run after run: the share of wave items that succeeded, and failed checks."""
    by: dict[str, list] = {}
    for r in stab.runs:
        by.setdefault(r.test_class, []).append(r)
    n = max((len(v) for v in by.values()), default=0)
    if n < 2:
        return {}
    labels = [f"#{i + 1}" for i in range(n)]
    pad = lambda vals: vals + [None] * (n - len(vals))  # noqa: E731
    name = {tc: words.t(f"class.{tc}") for tc in by}
    return {
        "stability": charts.lines(words.t("chart.stability"), labels,
                                  {name[tc]: pad([r.success_rate for r in rs]) for tc, rs in by.items()
                                   if any(r.success_rate is not None for r in rs)}, y_max=1.0,
                                  no_data=words.t("chart.no_data")),
        "failed_checks": charts.lines(words.t("chart.failed_checks"), labels,
                                      {name[tc]: pad([r.checks_failed if r.validated else None for r in rs])
                                       for tc, rs in by.items()}, no_data=words.t("chart.no_data")),
    }
