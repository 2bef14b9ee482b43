"""The plan's window drives the schedule: daily runs from its start to its end; the report runs on the Assets."""

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from gpupoc.pipeline.common import repo_root

DAGS = repo_root() / "dags"


def _timetable(dag):
    from airflow.serialization import serialized_objects as so

    return so.decode_timetable(so.encode_timetable(dag.timetable))  # what the scheduler uses


def _runs(dag, catchup: bool) -> list[datetime]:
    from airflow.timetables.base import TimeRestriction

    tt = _timetable(dag)
    r = TimeRestriction(earliest=dag.start_date, latest=dag.end_date, catchup=catchup)
    out, last = [], None
    while (info := tt.next_dagrun_info(last_automated_data_interval=last, restriction=r)) is not None:
        out.append(info.run_after)
        last = info.data_interval
        if len(out) > 50:
            break
    return out


def _load(path: Path, monkeypatch, plan: Path | None):
    from airflow.dag_processing.dagbag import DagBag

    if plan:
        monkeypatch.setenv("GPUPOC_PLAN", str(plan))
    bag = DagBag(dag_folder=str(path))
    assert bag.import_errors == {}
    return bag


@pytest.fixture
def week_plan(tmp_path):
    data = yaml.safe_load((repo_root() / "plans" / "default.yaml").read_text())
    data["window"].update(start="2026-12-14T09:30:00+00:00", end="2026-12-21T09:30:00+00:00", schedule="@daily")
    p = tmp_path / "plans" / "week.yaml"
    p.parent.mkdir()
    p.write_text(yaml.safe_dump(data))
    return p


def test_a_test_class_runs_daily_from_the_window_start_to_its_end(week_plan, monkeypatch):
    dag = _load(DAGS / "poc_utilization.py", monkeypatch, week_plan).dags["poc_utilization"]
    assert dag.start_date == datetime(2026, 12, 14, 9, 30, tzinfo=timezone.utc)
    assert dag.end_date == datetime(2026, 12, 21, 9, 30, tzinfo=timezone.utc)
    runs = _runs(dag, catchup=True)
    assert runs == [datetime(2026, 12, 15, tzinfo=timezone.utc) + timedelta(days=i) for i in range(7)], \
        "one run each midnight inside the window, none before its start nor after its end"


def test_without_catchup_the_first_run_is_the_first_midnight_after_the_start(week_plan, monkeypatch):
    dag = _load(DAGS / "poc_utilization.py", monkeypatch, week_plan).dags["poc_utilization"]
    assert dag.catchup is False
    assert _runs(dag, catchup=False)[0] == datetime(2026, 12, 15, tzinfo=timezone.utc)


def test_a_demo_started_just_before_midnight_has_no_scheduled_run_for_a_day(tmp_path, monkeypatch):
    from gpupoc.demo.services import DemoPaths, write_demo_plan

    now = datetime(2026, 12, 7, 23, 59, 30, tzinfo=timezone.utc)
    sim = {"url": "https://127.0.0.1:4000", "kubeconfig": "/x/var/sim/kubeconfig", "audit_log": "/x/var/sim/audit.log"}
    plan = write_demo_plan(DemoPaths(tmp_path), repo_root() / "plans" / "default.yaml", sim, None, now=now)
    for name in ("poc_queue_congestion", "poc_fault_recovery"):
        dag = _load(DAGS / f"{name}.py", monkeypatch, plan).dags[name]
        first = _runs(dag, catchup=True)[0]
        assert first >= now + timedelta(days=1), f"{name}: a scheduled run at {first} beside the demo's own"


def test_the_report_runs_when_the_five_evidence_assets_are_updated_and_by_hand(monkeypatch):
    from gpupoc.dags.assets import EVIDENCE

    dag = _load(DAGS / "poc_report.py", monkeypatch, None).dags["poc_report"]
    tt = _timetable(dag)
    assert type(tt).__name__ == "AssetTriggeredTimetable"
    names = {a.name for a in dag.timetable.asset_condition.objects}
    assert names == {a.name for a in EVIDENCE.values()}
    assert type(dag.timetable.asset_condition).__name__ == "AssetAll", "a report once every class has new evidence"
    assert dag.task_ids == ["compile_report"]
    assert {"reviewer", "ui_usability", "documentation", "training_cost", "scorecard_file"} <= set(dag.params.keys())
