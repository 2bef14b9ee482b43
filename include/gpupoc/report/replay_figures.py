"""The report's view of a replayed wave: the history's waits beside the platform's, and the capacity question.

Read from a replayed class's ``replay_waits`` (one row per job) and ``replay_capacity`` tables and its
``files/replay_wave.json`` (what was replayed, what was dropped and why). Shown with the scheduling-policy
item (figures and tables), as two charts, and as a note that says the what-if is a model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from gpupoc.evidence.reader import RunEvidence
from gpupoc.report import charts
from gpupoc.report.models import EvidenceTable, Figure
from gpupoc.report.wording import Wording

REPLAY_CLASSES = ("queue_congestion", "utilization")
ITEM = "scheduling_policy"
SCENARIOS = ("history", "platform", "model_today", "model_what_if")


def replayed(runs: dict[str, RunEvidence]) -> list[tuple[str, RunEvidence]]:
    """The classes whose latest run replayed a history (it has a ``replay_waits`` table)."""
    return [(tc, runs[tc]) for tc in REPLAY_CLASSES if tc in runs and "replay_waits" in runs[tc].table_names()]


def wave_info(ev: RunEvidence) -> dict:
    """What the run replayed (``files/replay_wave.json``); empty when absent or unreadable."""
    try:
        return json.loads((ev.run_dir / "files" / "replay_wave.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def by_tenant_and_gpus(waits: pd.DataFrame) -> pd.DataFrame:
    """Per tenant and job GPU count: jobs, and the history's (compressed), the platform's and the model's waits."""
    g = waits.groupby(["tenant", "gpus"], as_index=False)
    out = g.agg(jobs=("job_id", "count"),
                history_p50=("history_wait_scaled_seconds", "median"),
                history_p90=("history_wait_scaled_seconds", lambda s: s.quantile(0.9)),
                platform_p50=("platform_wait_seconds", "median"),
                platform_p90=("platform_wait_seconds", lambda s: s.quantile(0.9)),
                model_p50=("model_wait_seconds", "median"))
    return out.sort_values(["tenant", "gpus"])


def item_details(item: str, runs: dict[str, RunEvidence]) -> tuple[list[Figure], list[EvidenceTable]]:
    """Figures and tables of the replay for the scheduling-policy item (none for other items)."""
    if item != ITEM:
        return [], []
    f: list[Figure] = []
    t: list[EvidenceTable] = []
    for tc, ev in replayed(runs):
        waits, info = ev.load("replay_waits"), wave_info(ev)
        if waits.empty:
            continue
        dropped = info.get("dropped") or {}
        f += [Figure(label="replay_jobs", value=f"{len(waits)}/{info.get('jobs_in_window', len(waits))}"),
              Figure(label="replay_dropped", value=", ".join(f"{k} {n}" for k, n in dropped.items()) or 0),
              Figure(label="replay_compression", value=f"{info.get('compression', '?'):g}x"
                     if isinstance(info.get("compression"), (int, float)) else "?")]
        lag = pd.to_numeric(waits["release_lag_seconds"], errors="coerce")
        if lag.notna().any():
            f.append(Figure(label="replay_release_lag", value=round(float(lag.max()), 3), unit="s"))
        t.append(EvidenceTable.from_frame("replay_waits", by_tenant_and_gpus(waits), 40))
        cap = ev.load("replay_capacity")
        if not cap.empty:
            cols = [c for c in ("scenario", "basis", "factor", "pools", "jobs", "wait_p50_seconds", "wait_p90_seconds",
                                "wait_max_seconds", "waited_share") if c in cap]
            t.append(EvidenceTable.from_frame("replay_capacity", cap[cols]))
    return f, t


def replay_charts(runs: dict[str, RunEvidence], words: Wording) -> dict[str, str]:
    """The history's, the platform's and the model's median waits per tenant and GPU count; the capacity answer."""
    out: dict[str, str] = {}
    for tc, ev in replayed(runs)[:1]:
        waits = ev.load("replay_waits")
        if waits.empty:
            continue
        g = by_tenant_and_gpus(waits)
        cats = [f"{r.tenant}/{int(r.gpus)}" for r in g.itertuples(index=False)]
        out["replay_waits"] = charts.grouped_bars(words.t("chart.replay_waits"), cats, {
            words.t("legend.history"): _floats(g["history_p50"]),
            words.t("legend.platform"): _floats(g["platform_p50"]),
            words.t("legend.model"): _floats(g["model_p50"])}, "s")
        cap = ev.load("replay_capacity")
        if not cap.empty:
            cap = cap.set_index("scenario").reindex([s for s in SCENARIOS if s in set(cap["scenario"])])
            labels = [words.t(f"replay.scenario.{s}", factor=f"{float(cap.loc[s, 'factor']):g}") for s in cap.index]
            out["replay_capacity"] = charts.grouped_bars(words.t("chart.replay_capacity"), labels, {
                "p50": _floats(cap["wait_p50_seconds"]), "p90": _floats(cap["wait_p90_seconds"])}, "s")
    return out


def replay_notes(runs: dict[str, RunEvidence], words: Wording) -> list[str]:
    """How to read the comparison, and that the what-if is a model, once per replayed class."""
    notes = []
    for tc, ev in replayed(runs):
        info = wave_info(ev)
        path = Path(info.get("file") or (info.get("source") or {}).get("path") or "?").name
        notes.append(words.t("note.replay", test_class=words.t(f"class.{tc}"), path=path,
                             compression=f"{info.get('compression', 0):g}", factor=f"{info.get('what_if_factor', 0):g}",
                             jobs=info.get("jobs_replayed", "?")))
    return notes


def _floats(s: pd.Series) -> list[float]:
    return [float(v) if v == v else float("nan") for v in pd.to_numeric(s, errors="coerce")]
