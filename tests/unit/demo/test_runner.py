from datetime import datetime, timezone

import pytest

from gpupoc.demo.runner import Monitor, clear_report_queue, find_report_run, stop_stale_runs
from gpupoc.exceptions import ApiError, GpupocError


class FakeClient:
    """Answers runs and task instances from scripted sequences, one step per poll."""

    def __init__(self, script: dict[str, list[tuple[str, list]]]):
        self.script = script
        self.calls: list[tuple] = []
        self.pos = {k: 0 for k in script}

    def get_run(self, dag_id, run_id):
        state, _ = self.script[dag_id][min(self.pos[dag_id], len(self.script[dag_id]) - 1)]
        if state == "error":
            self.pos[dag_id] += 1
            raise ApiError(500, {"message": "database is locked"}, "GET run")
        return {"state": state}

    def task_instances(self, dag_id, run_id):
        _, tis = self.script[dag_id][min(self.pos[dag_id], len(self.script[dag_id]) - 1)]
        self.pos[dag_id] += 1
        return [{"task_id": f"t{i}", "state": s} for i, s in enumerate(tis)]

    def request(self, method, path, body=None, params=None):
        self.calls.append((method, path, body, params))
        if method == "DELETE" and getattr(self, "queued", None) is not None:
            if not self.queued:
                raise ApiError(404, {"detail": "Queue event with dag_id: `poc_report` was not found"}, path)
            self.queued = []
        if method == "GET" and path.endswith("/dagRuns"):
            return self.runs.get(path, {"dag_runs": []})
        return {}


class Clock:
    """A clock for the monitor: reads ``now``, and each sleep moves it on by the time slept plus ``step``
    (the polls themselves take time), so elapsed stamps never depend on the machine's clock or uptime."""

    def __init__(self, now: float = 0.0, step: float = 0.0):
        self.now, self.step = now, step

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds + self.step


def fields_of(line: str) -> list[str]:
    """``[ 0:05] poc_a   running  none 2`` -> ["poc_a", "running", "none", "2"] (the stamp pads with spaces)."""
    stamp, _, rest = line.partition("]")
    assert stamp.startswith("["), line
    return rest.split()


@pytest.mark.parametrize("started", [0.0, 5_000_000.0], ids=["machine-booted-now", "machine-up-for-weeks"])
def test_monitor_prints_a_line_per_change_and_returns_each_final_state(started):
    client = FakeClient({
        "poc_a": [("queued", [None, None]), ("running", ["running", None]), ("running", ["running", None]),
                  ("success", ["success", "success"])],
        "poc_b": [("running", ["success", "failed"]), ("failed", ["success", "failed"])],
    })
    lines: list[str] = []
    clock = Clock(started + 3.0)
    final = Monitor(client, started=started, out=lines.append, poll=5, clock=clock, sleep=clock.sleep).wait(
        {"poc_a": "r1", "poc_b": "r2"}, timeout=600)
    assert final == {"poc_a": "success", "poc_b": "failed"}
    a = [ln for ln in lines if "poc_a" in ln]
    assert [fields_of(ln)[1] for ln in a] == ["queued", "running", "success"], "the unchanged poll printed nothing"
    assert [ln.split("]")[0] for ln in a] == ["[ 0:03", "[ 0:08", "[ 0:18"], "seconds since the demo started"
    assert "none 2" in a[0] and "success 2" in a[-1]


def test_a_busy_api_is_reported_and_polled_again():
    client = FakeClient({"poc_a": [("error", []), ("success", ["success"])]})
    lines: list[str] = []
    clock = Clock()
    assert Monitor(client, 0.0, lines.append, 0, clock=clock, sleep=clock.sleep).wait(
        {"poc_a": "r"}, timeout=10) == {"poc_a": "success"}
    assert any("database is locked" in ln for ln in lines)


def test_runs_still_active_at_the_timeout_are_named():
    client = FakeClient({"poc_a": [("running", ["running"])]})
    clock = Clock()
    with pytest.raises(GpupocError) as exc:
        Monitor(client, 0.0, lambda _: None, 10, clock=clock, sleep=clock.sleep).wait({"poc_a": "r"}, timeout=60)
    assert "runs still active after 60 s: ['poc_a']" in str(exc.value)
    assert clock.now == 70.0, "it polled until the timeout had passed, not a poll longer"


def test_the_report_run_is_the_newest_queued_after_the_demo_started():
    client = FakeClient({})
    since = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
    client.runs = {"/api/v2/dags/poc_report/dagRuns": {"dag_runs": [
        {"dag_run_id": "old", "queued_at": "2026-11-30T08:59:00Z"}]}}
    assert find_report_run(client, since) is None
    client.runs["/api/v2/dags/poc_report/dagRuns"]["dag_runs"].insert(
        0, {"dag_run_id": "asset_triggered__x", "queued_at": "2026-11-30T09:12:00.5Z"})
    assert find_report_run(client, since) == "asset_triggered__x"


def test_unfinished_runs_of_an_earlier_demo_are_marked_failed():
    client = FakeClient({})
    client.runs = {"/api/v2/dags/poc_a/dagRuns": {"dag_runs": [{"dag_run_id": "manual__1"}]}}
    lines: list[str] = []
    stop_stale_runs(client, ["poc_a", "poc_b"], lines.append)
    patches = [c for c in client.calls if c[0] == "PATCH"]
    assert patches == [("PATCH", "/api/v2/dags/poc_a/dagRuns/manual__1", {"state": "failed"},
                        {"update_mask": "state"})]
    assert lines == ["stopped the unfinished run poc_a/manual__1 of an earlier demo"]


def test_events_left_queued_for_the_report_are_cleared_and_an_empty_queue_is_fine():
    client = FakeClient({})
    client.queued = ["gpupoc_evidence_audit_trail"]
    lines: list[str] = []
    clear_report_queue(client, lines.append)
    assert client.calls[-1][:2] == ("DELETE", "/api/v2/dags/poc_report/assets/queuedEvents")
    assert client.queued == [] and len(lines) == 1
    clear_report_queue(client, lines.append)  # 404: nothing queued, no error
    assert len(lines) == 1


def test_classes_are_chosen_by_name_with_or_without_prefix_in_the_demos_order():
    from gpupoc.demo.runner import CLASS_DAGS, select_classes

    assert select_classes("") == CLASS_DAGS and select_classes(None) == CLASS_DAGS
    assert select_classes("utilization, poc_tenant_isolation") == ("poc_tenant_isolation", "poc_utilization")
    with pytest.raises(GpupocError) as exc:
        select_classes("tenant_isolation,isolaton")
    assert "poc_isolaton" in str(exc.value) and "tenant_isolation" in str(exc.value)


def test_without_named_classes_the_demo_runs_the_classes_its_plan_enables():
    from gpupoc.demo.runner import CLASS_DAGS, plan_classes
    from gpupoc.pipeline.common import repo_root

    plans = repo_root() / "plans"
    assert plan_classes(plans / "scale.yaml") == ("poc_queue_congestion",), "the other classes are disabled there"
    assert plan_classes(plans / "default.yaml") == CLASS_DAGS
    assert plan_classes(plans / "scale.yaml", "audit_trail") == ("poc_audit_trail",), "named classes are run"


def test_the_cli_refuses_an_unknown_class_before_anything_starts(capsys):
    from gpupoc.cli import main

    assert main(["demo", "--classes", "nope"]) == 2
    err = capsys.readouterr().err
    assert "--classes" in err and "poc_nope" in err and "audit_trail" in err


def test_the_cli_gives_a_candidate_its_own_state_directory_and_leaves_its_report_to_compare(monkeypatch, tmp_path):
    from gpupoc.cli import main
    from gpupoc.demo import runner

    seen = []
    monkeypatch.setattr(runner, "main_demo", lambda opts: seen.append(opts) or 0)
    assert main(["demo", "--platform", "kai", "--var-dir", str(tmp_path / "kai"), "--no-report"]) == 0
    assert seen[0].var_dir == tmp_path / "kai" and seen[0].report is False and seen[0].platform == "kai"
    assert main(["demo"]) == 0
    assert seen[1].var_dir is None and seen[1].report is True, "make demo keeps var/ and writes its report"
