"""RunEvidence: the one reader of a run's evidence; tables checked against the manifest, never a traceback."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from gpupoc.evidence import EvidenceWriter, QueueSnapshot
from gpupoc.evidence.reader import EvidenceUnreadable, ProblemKind, RunEvidence, find_runs

RUN = "manual__2026-11-30T07:00:00+00:00"
T0 = datetime(2026, 11, 30, 7, 0, tzinfo=timezone.utc)


def snapshots(n: int = 3) -> list[QueueSnapshot]:
    return [QueueSnapshot(ts=T0, pod=f"p-{i}", namespace="team-nlp", phase="Pending", reason="Unschedulable",
                          message="0/5 nodes are available: 3 Insufficient nvidia.com/gpu.", source="pod condition")
            for i in range(n)]


@pytest.fixture
def run(tmp_path):
    w = EvidenceWriter(tmp_path, "poc_queue_congestion", RUN)
    w.write("queue_snapshots", snapshots(), source="api")
    w.mark_not_verified("explanations", "events API unreachable", "pipeline")
    w.write_manifest(window_start=T0, window_end=T0, plan_hash="ab" * 32, expected_tables=["workload_runs"],
                     extra={"test_class": "queue_congestion"})
    return w


def test_a_written_run_reads_back_verified_with_no_problems(run):
    ev = RunEvidence.open(run.run_dir)
    assert (ev.dag_id, ev.run_id, ev.test_class) == ("poc_queue_congestion", RUN, "queue_congestion")
    assert ev.rel_dir == f"poc_queue_congestion/{run.run_dir.name}" and ev.evidence_root == run.root
    assert ev.status("queue_snapshots").verified and ev.load("queue_snapshots")["reason"].tolist() == ["Unschedulable"] * 3
    assert ev.problems() == []


def test_tables_the_collector_could_not_verify_carry_its_words_and_a_code(run):
    ev = RunEvidence.open(run.run_dir)
    st = ev.status("explanations")
    assert not st.verified and st.code == "table.collector" and st.args["detail"] == "events API unreachable"
    assert ev.status("workload_runs").code == "table.not_collected"
    assert ev.status("utilization").code == "table.not_in_manifest" and ev.load("utilization").empty


def test_a_table_rewritten_after_the_manifest_is_changed_and_not_verified(run):
    run.write("queue_snapshots", snapshots(1), source="api")
    ev = RunEvidence.open(run.run_dir)
    assert ev.status("queue_snapshots").code == "table.changed" and not ev.status("queue_snapshots").verified
    assert [(p.kind, p.path) for p in ev.problems()] == [(ProblemKind.CHANGED, "tables/queue_snapshots.parquet")]


def test_a_truncated_table_is_unreadable_with_a_reason_and_loads_empty(run):
    path = run.table_path("queue_snapshots")
    path.write_bytes(path.read_bytes()[:100])
    ev = RunEvidence.open(run.run_dir)
    st = ev.status("queue_snapshots")
    assert st.code == "table.unreadable" and st.args["detail"], st
    (problem,) = ev.problems()
    assert problem.kind is ProblemKind.UNREADABLE and problem.path == "tables/queue_snapshots.parquet"
    assert ev.load("queue_snapshots").empty, "an unreadable table loads empty, never a traceback"


def test_a_missing_table_and_a_manifest_without_plan_hash_are_problems(run):
    run.table_path("queue_snapshots").unlink()
    m = json.loads((run.run_dir / "manifest.json").read_text())
    m["plan_hash"] = ""
    (run.run_dir / "manifest.json").write_text(json.dumps(m))
    kinds = {p.kind for p in RunEvidence.open(run.run_dir).problems()}
    assert kinds == {ProblemKind.MISSING, ProblemKind.NO_PLAN_HASH}


def test_a_missing_or_broken_manifest_names_the_path_and_the_fix(tmp_path, run):
    with pytest.raises(EvidenceUnreadable, match="no evidence manifest"):
        RunEvidence.open(tmp_path / "nowhere")
    (run.run_dir / "manifest.json").write_text('{"dag_id": ')
    with pytest.raises(EvidenceUnreadable, match="not readable JSON.*rerun the evidence collection task"):
        RunEvidence.open(run.run_dir)


def test_find_runs_orders_by_window_and_reports_unreadable_manifests(tmp_path):
    for run_id, end in (("b-run", "2026-11-30T08:00:00Z"), ("a-run", "2026-11-30T09:00:00Z")):
        EvidenceWriter(tmp_path, "poc_utilization", run_id).write_manifest(window_start=T0, window_end=end,
                                                                           plan_hash="0" * 64)
    broken = tmp_path / "poc_utilization" / "c-run"
    broken.mkdir()
    (broken / "manifest.json").write_text("not json")
    skipped: list = []
    assert [r.run_id for r in find_runs(tmp_path, skipped)] == ["b-run", "a-run"]
    assert [p for p, _ in skipped] == [broken] and "not readable JSON" in skipped[0][1]


def test_a_table_is_read_once_per_reader_and_each_caller_gets_a_frame_of_its_own(run, monkeypatch):
    import pandas as pd

    reads = []
    real = pd.read_parquet
    monkeypatch.setattr(pd, "read_parquet", lambda *a, **k: reads.append(a) or real(*a, **k))
    ev = RunEvidence.open(run.run_dir)
    first = ev.load("queue_snapshots")
    first.loc[0, "reason"] = "edited by a caller"
    again = ev.load("queue_snapshots")
    assert again["reason"].tolist() == ["Unschedulable"] * 3, "a caller's edit never reaches the next caller"
    assert len(reads) == 1
    assert ev.load("queue_snapshots", columns=["pod"]).columns.tolist() == ["pod"] and len(reads) == 2


def test_a_table_written_again_while_a_reader_holds_it_is_read_again(run):
    ev = RunEvidence.open(run.run_dir)
    assert len(ev.load("queue_snapshots")) == 3
    run.write("queue_snapshots", snapshots(5), source="api")
    assert len(ev.load("queue_snapshots")) == 5
