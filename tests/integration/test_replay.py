"""A replayed wave end to end on the simulated cluster: the shipped replay plan's window of the sample history
through the congestion class's own steps (``class_runner``: observer, scheduled release, collection,
validation). Releases follow the history's compressed arrival offsets, the history's cancelled job is deleted
by its tenant, and the evidence sets the history's waits beside the platform's."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from gpupoc.common.timefmt import parse_time
from gpupoc.pipeline.common import repo_root

from .class_runner import run_class

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600), pytest.mark.xdist_group("replay")]

COMPRESS = 96  # the demo plan's window at 96x instead of 24x: about 25 s of arrivals


def replay_plan(tmp: Path, sim) -> Path:
    plan = yaml.safe_load((repo_root() / "plans" / "replay.yaml").read_text())
    plan["platform"]["kubeconfig"] = str(sim.kubeconfig_http)
    plan["evidence_root"] = str(tmp / "evidence")
    plan["evidence_sources"]["audit_log_path"] = str(sim.audit_log)
    tomorrow = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=1)
    plan["window"].update(start=tomorrow.isoformat(), end=(tomorrow + timedelta(days=7)).isoformat())
    qc = plan["test_classes"]["queue_congestion"]
    qc["replay"].update(file=str(repo_root() / "plans" / "history" / "kalos-300.csv"), compress=COMPRESS)
    qc.update(snapshot_interval_seconds=1, gate_timeout_seconds=60)
    path = tmp / "plan.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    from .conftest import launch

    tmp = tmp_path_factory.mktemp("replay")
    sim = launch(tmp / "sim")
    try:
        return run_class(replay_plan(tmp, sim), "queue_congestion", "replay__e2e")
    finally:
        sim.stop()


def test_the_replay_runs_through_the_pipeline_and_fails_no_check(replayed):
    assert not replayed.errors, replayed.errors
    failed = {c: v for c, v in replayed.verdicts.items() if v == "fail"}
    assert not failed, (failed, replayed.summary)
    outcomes = replayed.summary["outcomes"]
    assert "lost" not in outcomes and outcomes.get("failed", 0) >= 5, outcomes  # the history's failures replayed
    assert replayed.summary["replay_jobs"] == 17 and replayed.summary["replay_compression"] == COMPRESS


def test_each_pod_is_released_at_its_arrival_offset_in_the_historys_order(replayed):
    release = json.loads((replayed.run_dir / "files" / "release.json").read_text())
    assert release["replay"] and release["complete"] and not release["unfinished"]
    first = {}
    for r in release["rows"]:
        first.setdefault(r["workload_key"], r)
    assert len(first) == 18
    for key, r in first.items():
        assert r["release_offset_seconds"] >= r["planned_offset_seconds"] - 0.01, (key, r)  # never early
    order = sorted(first.values(), key=lambda r: parse_time(r["released_at"]))
    planned = [r["planned_offset_seconds"] for r in order]
    assert all(b >= a - 1.0 for a, b in zip(planned, planned[1:])), planned  # the history's order
    span = max(planned) - min(planned)
    assert release["release_spread_seconds"] >= span - 1.0, release["release_spread_seconds"]  # not all at once


def test_the_historys_cancelled_job_is_deleted_by_its_tenant(replayed):
    release = json.loads((replayed.run_dir / "files" / "release.json").read_text())
    [cancel] = release["cancelled"]
    runs = pd.read_parquet(replayed.run_dir / "tables" / "workload_runs.parquet")
    row = runs[runs["pod"] == cancel["pod"]].iloc[0]
    assert row["outcome"] == "deleted" and row["outcome_by"] == "system:serviceaccount:team-nlp:runner", row.to_dict()


def test_the_comparison_has_the_historys_and_the_platforms_wait_per_job_and_the_capacity_answer(replayed):
    waits = pd.read_parquet(replayed.run_dir / "tables" / "replay_waits.parquet")
    assert len(waits) == 17 and waits["history_wait_scaled_seconds"].notna().all()
    assert waits["platform_wait_seconds"].notna().sum() >= 15, waits[["job_id", "platform_wait_seconds"]]
    assert (waits["history_wait_scaled_seconds"] * COMPRESS - waits["history_wait_seconds"]).abs().max() < 0.1
    assert set(waits["tenant"]) == {"team-vision", "team-nlp"}
    assert waits.loc[waits["pods"] == 2, "gpus"].tolist() == [16]  # the 2-node job: one row, its 16 GPUs
    cap = pd.read_parquet(replayed.run_dir / "tables" / "replay_capacity.parquet").set_index("scenario")
    assert list(cap.index) == ["history", "platform", "model_today", "model_what_if"]
    assert cap.loc["model_today", "wait_max_seconds"] > 0 and cap.loc["model_what_if", "wait_max_seconds"] == 0
    assert cap.loc["platform", "jobs"] == waits["platform_wait_seconds"].notna().sum()
    manifest = json.loads((replayed.run_dir / "manifest.json").read_text())
    assert manifest["tables"]["replay_waits"]["verified"] and manifest["tables"]["replay_capacity"]["verified"]


def test_the_historys_two_node_job_runs_as_one_gang_and_is_judged_as_one(replayed):
    gangs = pd.read_parquet(replayed.run_dir / "tables" / "gang_placements.parquet")
    assert len(gangs) == 1, gangs.to_dict("records")
    gang = gangs.iloc[0]
    assert (gang["replicas"], gang["min_available"], gang["gpus_per_pod"]) == (2, 2, 8), gang.to_dict()
    assert replayed.summary["gangs"]["gangs"] == 1
    runs = pd.read_parquet(replayed.run_dir / "tables" / "workload_runs.parquet")
    assert runs["gang"].nunique() == 1 and runs.loc[runs["gang"].notna(), "item"].nunique() == 2
    assert {c: replayed.verdicts.get(c) for c in ("GNG-01", "GNG-02", "GNG-03")} == dict.fromkeys(
        ("GNG-01", "GNG-02", "GNG-03"), "pass"), replayed.summary["gangs"]
