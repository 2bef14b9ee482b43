"""The report's replay view: the history's waits beside the platform's per tenant and GPU count, the capacity
question with the model's today estimate beside the measured waits, the charts and the note."""

from __future__ import annotations

import json

import pandas as pd

from gpupoc.evidence.reader import RunEvidence
from gpupoc.report import replay_figures as RF
from gpupoc.report.build import build_report
from gpupoc.report.wording import Wording
from gpupoc.validation import synthetic as syn

from .conftest import GOOD_SCORES, write_later_run


def waits() -> pd.DataFrame:
    rows = [("team-nlp", 1, 0.5, 0.0, 0.0), ("team-nlp", 1, 7.0, 1.0, 0.0), ("team-nlp", 4, 0.3, 26.4, 8.9),
            ("team-vision", 16, 0.25, 0.0, 17.1)]
    return pd.DataFrame([{
        "job_id": f"job-{k}", "job_index": k, "tenant": t, "gpus": g, "pods": 1 + (g > 8), "pool": "training",
        "priority_class": "gpupoc-normal", "history_state": "completed", "planned_release_seconds": float(k),
        "release_seconds": k + 0.05, "release_lag_seconds": 0.05 * (k + 1), "history_wait_seconds": h * 24,
        "history_wait_scaled_seconds": h, "platform_wait_seconds": p, "model_wait_seconds": m,
        "outcome": "succeeded", "items": f"qc-x-{k:03d}"} for k, (t, g, h, p, m) in enumerate(rows)])


def capacity() -> pd.DataFrame:
    rows = [("history", "history", 1.0, 0.4, 5.7), ("platform", "measured", 1.0, 0.0, 0.0),
            ("model_today", "model", 1.0, 0.0, 3.6), ("model_what_if", "model", 2.0, 0.0, 0.0)]
    return pd.DataFrame([{"scenario": s, "basis": b, "factor": f, "gpus": int(32 * f),
                          "pools": f"training {int(24 * f)}, inference {int(8 * f)}", "jobs": 4,
                          "wait_p50_seconds": p50, "wait_p90_seconds": p90, "wait_max_seconds": p90,
                          "waited_share": 0.25, "note": "n"} for s, b, f, p50, p90 in rows])


def replay_run(root, run_id="scheduled__2", validate=False):
    tables = {**syn.good_tables("queue_congestion"), "replay_waits": waits(), "replay_capacity": capacity()}
    run = write_later_run(root, "queue_congestion", tables, run_id=run_id, validate=validate)
    (run / "files").mkdir(exist_ok=True)
    (run / "files" / "replay_wave.json").write_text(json.dumps({
        "file": "history/kalos-300.csv", "compression": 24.0, "jobs_in_window": 6, "jobs_replayed": 4,
        "dropped": {"too_large": 1, "no_gpu": 1}, "what_if_factor": 2.0}))
    return run


def test_the_scheduling_policy_item_shows_the_waits_per_tenant_and_gpus_and_the_capacity_answer(tmp_path):
    ev = RunEvidence.open(replay_run(tmp_path / "evidence"))
    figures, tables = RF.item_details("scheduling_policy", {"queue_congestion": ev})
    fig = {f.label: f.value for f in figures}
    assert fig["replay_jobs"] == "4/6" and fig["replay_dropped"] == "too_large 1, no_gpu 1"
    assert fig["replay_compression"] == "24x" and fig["replay_release_lag"] == 0.2
    by = {t.title: t for t in tables}
    w = by["replay_waits"]
    assert w.columns[:3] == ["tenant", "gpus", "jobs"] and "history_p50" in w.columns and "platform_p50" in w.columns
    row = dict(zip(w.columns, w.rows[0]))
    assert (row["tenant"], row["gpus"], row["jobs"], row["history_p50"], row["platform_p50"]) == ("team-nlp", 1, 2,
                                                                                                  3.75, 0.5)
    cap = [dict(zip(by["replay_capacity"].columns, r)) for r in by["replay_capacity"].rows]
    assert [c["scenario"] for c in cap] == ["history", "platform", "model_today", "model_what_if"]
    assert RF.item_details("queue_explainability", {"queue_congestion": ev}) == ([], [])


def test_no_replay_no_replay_view(tmp_path):
    run = write_later_run(tmp_path / "evidence", "queue_congestion", syn.good_tables("queue_congestion"),
                          validate=False)
    runs = {"queue_congestion": RunEvidence.open(run)}
    assert RF.item_details("scheduling_policy", runs) == ([], [])
    assert RF.replay_charts(runs, Wording("en")) == {} and RF.replay_notes(runs, Wording("en")) == []


def test_the_charts_and_the_note_speak_the_reports_language(tmp_path):
    runs = {"queue_congestion": RunEvidence.open(replay_run(tmp_path / "evidence"))}
    en, zh = RF.replay_charts(runs, Wording("en")), RF.replay_charts(runs, Wording("zh"))
    assert set(en) == {"replay_waits", "replay_capacity"}
    assert "team-vision/16" in en["replay_waits"] and "queue model" in en["replay_waits"]
    assert "排队模型" in zh["replay_waits"] and "模型，GPU x2" in zh["replay_capacity"]
    [note] = RF.replay_notes(runs, Wording("en"))
    assert "replayed 4 jobs of kalos-300.csv, compressed 24x" in note
    assert "is a queue model, not a measurement" in note


def test_the_built_report_carries_the_comparison_charts_and_note(root_copy, tmp_path):
    replay_run(root_copy, validate=True)
    r = build_report(root_copy, out_dir=tmp_path / "out", scorecard=GOOD_SCORES).report
    assert {"replay_waits", "replay_capacity"} <= {t.title for t in r.item("scheduling_policy").tables}
    assert {"replay_waits", "replay_capacity"} <= set(r.charts)
    assert any("not a measurement" in n for n in r.notes)
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "Capacity at the replay&#39;s load" in html or "Capacity at the replay's load" in html
