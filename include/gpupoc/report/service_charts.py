"""A chart per online service: its availability (%) and p95 latency (ms), second by second from its load pod's
rows (``service_probes``), against the SLO the rows were judged by (``service_slo``), with the seconds that
missed it shaded and, in the fault-recovery class, the node failure under a replica and its replacement
marked (``service_recovery``). The time axis starts at the traffic's start, local to the plan's time zone.
"""

from __future__ import annotations

import re

import pandas as pd

from gpupoc.report import charts
from gpupoc.report.cells import local_time, number
from gpupoc.report.frames import Runs, load
from gpupoc.report.wording import Wording

CLASSES = ("queue_congestion", "fault_recovery")  # the classes whose service traffic a check judges
AVAILABILITY, P95, SLO_LINE = "#1f77b4", "#ff7f0e", "#555555"
FAILURE, REPLACED = "#d62728", "#2ca02c"


def chart_name(test_class: str, service: str) -> str:
    """``service_<class>_<service>``: the chart's key and file name (charts/<name>.svg)."""
    return "service_" + re.sub(r"[^A-Za-z0-9_-]+", "-", f"{test_class}_{service}")


def _origin(probes: pd.DataFrame, slo: pd.DataFrame) -> pd.Timestamp | None:
    """The traffic's start: the SLO row's ``traffic_started_at``, else the first second's time."""
    started = slo["traffic_started_at"].dropna() if "traffic_started_at" in slo else pd.Series(dtype=object)
    stamps = pd.to_datetime(started if len(started) else probes.get("ts", pd.Series(dtype=object)), utc=True,
                            errors="coerce").dropna()
    return stamps.min() if len(stamps) else None


def _seconds(probes: pd.DataFrame, t0: pd.Timestamp | None) -> pd.Series:
    """Each row's seconds after the origin (its ``second`` when its time is unknown)."""
    if t0 is None or "ts" not in probes:
        return probes["second"].astype(float)
    at = (pd.to_datetime(probes["ts"], utc=True, errors="coerce") - t0).dt.total_seconds()
    return at.fillna(probes["second"].astype(float))


def _value(v: object) -> float | None:
    try:
        x = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if x != x else x


def _steps(xs: list[float], ys: list[float | None]) -> list[tuple[float, float | None]]:
    """A value per second drawn over its whole second: (x, y), (x + 1, y); a second without one is a gap."""
    out: list[tuple[float, float | None]] = []
    for x, y in zip(xs, ys):
        out += [(x, y), (x + 1, y)] if y is not None else [(x, None)]
    return out


def _breaches(xs: list[float], seconds: list[int], breach: list[bool],
              words: Wording) -> list[tuple[float, float, str]]:
    """The seconds that missed the SLO as spans, consecutive ones joined into one (x0, x1, tooltip)."""
    runs: list[list[tuple[float, int]]] = []
    for x, s, b in zip(xs, seconds, breach):
        if not b:
            continue
        if runs and s == runs[-1][-1][1] + 1:
            runs[-1].append((x, s))
        else:
            runs.append([(x, s)])
    return [(r[0][0], r[-1][0] + 1, words.t("tip.breach_second", s=r[0][1]) if len(r) == 1
             else words.t("tip.breach_seconds", a=r[0][1], b=r[-1][1])) for r in runs]


def _failure_marks(rec: pd.DataFrame, t0: pd.Timestamp | None, words: Wording) -> list[tuple[str, str, float]]:
    """The node failure (and the replacement's ready time) as markers, seconds after the traffic's start."""
    if rec.empty or t0 is None or "failed_at" not in rec:
        return []
    out = []
    for r in rec.itertuples(index=False):
        failed = pd.to_datetime(r.failed_at, utc=True, errors="coerce")
        if pd.isna(failed):
            continue
        at = (failed - t0).total_seconds()
        out.append((words.t("legend.node_failure", node=r.node), FAILURE, at))
        replaced = _value(getattr(r, "replacement_seconds", None))
        if replaced is not None:
            out.append((words.t("legend.replacement_ready"), REPLACED, at + replaced))
    return out


def traffic_chart(probes: pd.DataFrame, slo: pd.DataFrame, rec: pd.DataFrame, title: str, words: Wording,
                  zone: str = "UTC") -> str:
    """Availability and p95 latency over the seconds of traffic, the SLO's bounds dashed, breaches shaded,
    the node failure and the replacement marked."""
    if probes.empty:
        return charts.empty(title, words.t("chart.no_data"))
    probes = probes.sort_values("second")
    t0 = _origin(probes, slo)
    xs = _seconds(probes, t0).tolist()
    bound = slo.iloc[0] if len(slo) else pd.Series(dtype=object)
    min_avail, max_p95 = _value(bound.get("slo_availability_pct")), _value(bound.get("slo_p95_ms"))
    p95 = [_value(v) for v in probes["p95_ms"]] if "p95_ms" in probes else [None] * len(xs)
    top = charts.nice_max(max([v for v in p95 if v is not None] + [max_p95 or 0]) * 1.1)
    avail = charts.Panel(words.t("axis.availability"), 100.0,
                         [(words.t("legend.availability"), AVAILABILITY,
                           _steps(xs, [_value(v) for v in probes["availability_pct"]]))],
                         [(words.t("legend.slo_availability", value=number(min_avail)), SLO_LINE, min_avail)]
                         if min_avail is not None else [])
    latency = charts.Panel(words.t("axis.p95_ms"), top, [(words.t("legend.p95"), P95, _steps(xs, p95))],
                           [(words.t("legend.slo_p95", value=number(max_p95)), SLO_LINE, max_p95)]
                           if max_p95 is not None else [])
    breach = probes["breach"].fillna(False).astype(bool).tolist() if "breach" in probes else [False] * len(xs)
    marks = charts.Marks(spans=_breaches(xs, probes["second"].tolist(), breach, words),
                         span_name=words.t("legend.breach"), markers=_failure_marks(rec, t0, words))
    axis = words.t("axis.seconds_after", what=words.t("axis.traffic_start"),
                   at=local_time(t0.to_pydatetime(), zone)) if t0 is not None else words.t("field.second")
    return charts.panels(title, [avail, latency], max(xs) + 1, axis, marks, no_data=words.t("chart.no_data"))


def service_charts(runs: Runs, words: Wording, zone: str = "UTC") -> tuple[dict[str, str], dict[str, str]]:
    """A chart per service of the classes whose traffic a check judges, and each one's caption."""
    svgs: dict[str, str] = {}
    captions: dict[str, str] = {}
    for tc in CLASSES:
        probes = load(runs, tc, "service_probes")
        if probes.empty or "service" not in probes:
            continue
        slo, rec = load(runs, tc, "service_slo"), load(runs, tc, "service_recovery")
        for service, rows in probes.groupby("service", sort=True):
            name = chart_name(tc, str(service))
            captions[name] = words.t("chart.service_traffic", service=service, test_class=words.t(f"class.{tc}"))
            own = lambda df: df[df["service"] == service] if "service" in df else df.iloc[0:0]  # noqa: E731
            svgs[name] = traffic_chart(rows, own(slo), own(rec), captions[name], words, zone)
    return svgs, captions
