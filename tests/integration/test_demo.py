"""`gpupoc demo` end to end: a real Airflow, the simulated cluster and monitoring, the five test classes,
the report and its decision; then the report triggered through the REST API with the trigger form's scores,
then the demo again on a cluster with a fault profile (Airflow reused), then `gpupoc down`.

To fit the test suite's time it runs a reduced plan: plans/default.yaml with the smaller waves and shorter
workloads of tests/integration/data/demo_small.yaml (the same classes, tenants, pools and checks).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from gpupoc.demo.pids import PidFile, is_alive
from gpupoc.demo.runner import CLASS_DAGS, DemoOptions, run_demo
from gpupoc.demo.services import DemoPaths, stop_everything
from gpupoc.pipeline.common import repo_root

pytestmark = pytest.mark.integration
OVERRIDES = Path(__file__).parent / "data" / "demo_small.yaml"
SCORES = {"reviewer": "Wang Fang", "reviewer_role": "business", "ui_usability": 4,
          "ui_usability_comment": "found every run in two clicks", "documentation": 2,
          "documentation_comment": "no quick start", "training_cost": 5}


def small_plan(dest: Path) -> Path:
    """plans/default.yaml with the overrides of data/demo_small.yaml, written to ``dest``."""
    plan = yaml.safe_load((repo_root() / "plans" / "default.yaml").read_text())
    over = yaml.safe_load(OVERRIDES.read_text())
    for w in plan["workloads"]:
        w.update(over["workloads"].get(w["name"], {}))
    for name, fields in over["test_classes"].items():
        plan["test_classes"][name].update(fields)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(yaml.safe_dump(plan, sort_keys=False))
    return dest


@pytest.fixture(scope="module")
def env():
    """A private var directory (pytest's tmp dirs can be rotated away by parallel sessions); down at the end."""
    root = Path(tempfile.mkdtemp(prefix="gpupoc-demo-it-"))
    plan = small_plan(root / "plans" / "small.yaml")  # its ../var/evidence is <root>/var/evidence
    paths = DemoPaths(repo_root(), root / "var")
    yield paths, plan
    stop_everything(paths)
    shutil.rmtree(root, ignore_errors=True)


def _demo(paths: DemoPaths, plan: Path, faults: str = "") -> tuple[object, list[str]]:
    lines: list[str] = []
    t0 = time.monotonic()
    result = run_demo(DemoOptions(repo=repo_root(), plan=plan, faults=faults, port=0, var_dir=paths.var,
                                  timeout=1200, out=lines.append))
    print(f"\ndemo (faults: {faults or 'none'}) in {time.monotonic() - t0:.0f} s: {result.to_dict()}")
    print("\n".join(lines[-20:]))
    return result, lines


@pytest.mark.timeout(1200)
def test_the_demo_on_a_correct_cluster_runs_every_class_and_ends_with_a_reasoned_decision_and_report(env):
    # Known gap: with this reduced plan the decision is still postpone (QC-09: the congestion class recorded no
    # queue snapshots), so go-live is not asserted yet; the fault-profile run below must end in postpone.
    paths, plan = env
    result, lines = _demo(paths, plan)
    assert result.outcome.decision in {"go-live", "limited-go-live", "later-optimization", "postpone"}, \
        result.to_dict()
    if result.outcome.decision != "go-live":
        assert result.outcome.reasons, "a decision short of go-live names its reasons"
        assert all("→" in r for r in result.outcome.reasons), result.outcome.reasons
    assert result.outcome.html.is_file() and (result.outcome.report_dir / "report.json").is_file()
    assert set(result.runs) == set(CLASS_DAGS)
    # progress: one line per change, with the DAG, its state and task counts; the closing block
    progress = [ln for ln in lines if re.match(r"\[\s*\d+:\d\d\] poc_\w+\s+(queued|running|success|failed)\s", ln)]
    assert {ln.split()[2] for ln in progress} >= set(CLASS_DAGS)
    assert any("success " in ln for ln in progress)
    assert len(progress) == len(set(progress)), "no line repeats an unchanged state"
    text = "\n".join(lines)
    assert f"Decision: {result.outcome.decision}" in text
    assert f"Report: {result.outcome.html}" in text
    assert re.search(r"Airflow UI: http://127\.0\.0\.1:\d+  \(login: admin / \S+\)", text)
    # every process is recorded by pid and alive
    table = PidFile.load(paths.pids)
    assert {"sim", "monitoring-prometheus", "monitoring-alertmanager", "monitoring-receiver",
            "airflow-api-server", "airflow-scheduler", "airflow-triggerer", "airflow-dag-processor"} <= set(table.entries)
    assert all(table.alive().values()), table.alive()
    saved = json.loads(paths.result.read_text())
    assert saved["decision"] == result.outcome.decision and saved["report_run"] == result.report_run


@pytest.mark.timeout(300)
def test_the_report_triggered_through_the_rest_api_keeps_the_trigger_forms_scores(env):
    from gpupoc.airflow_runtime.client import AirflowClient
    from gpupoc.exceptions import ApiError
    from gpupoc.plan import load_plan
    from gpupoc.report.airflow import report_out_dir

    paths, _ = env
    client = AirflowClient.for_home(paths.airflow)
    with pytest.raises(ApiError) as exc:  # the form bounds scores to 1-5
        client.trigger("poc_report", {**SCORES, "training_cost": 6})
    assert exc.value.status == 400, exc.value
    run = client.trigger("poc_report", SCORES)
    final = client.wait_run("poc_report", run["dag_run_id"], timeout=240, poll=3)
    assert final["state"] == "success", final
    out = report_out_dir(load_plan(paths.plan), run["dag_run_id"])
    card = {s["item"]: s for s in json.loads((out / "scorecard.json").read_text())}
    assert {k: (v["reviewer"], v["score"]) for k, v in card.items()} == {
        "ui_usability": ("Wang Fang", 4), "documentation": ("Wang Fang", 2), "training_cost": ("Wang Fang", 5)}
    assert card["documentation"]["comment"] == "no quick start"
    report = json.loads((out / "report.json").read_text())
    items = {i["id"]: i for i in report["items"]}
    assert items["documentation"]["verdict"] == "fail", "a score of 2 fails the experience item"
    assert items["training_cost"]["verdict"] == "pass"
    assert "Wang Fang" in json.dumps(items["ui_usability"], ensure_ascii=False)


@pytest.mark.timeout(1200)
def test_the_demo_on_a_cluster_leaking_logs_across_tenants_ends_in_postpone_and_down_stops_everything(env):
    paths, plan = env
    before = PidFile.load(paths.pids)
    result, lines = _demo(paths, plan, faults="cross-tenant-logs")
    assert result.outcome.decision == "postpone", result.to_dict()
    assert result.outcome.open_items.get("permission_isolation") == "fail", result.outcome.open_items
    assert any("isolation" in r.lower() for r in result.outcome.reasons), result.outcome.reasons
    after = PidFile.load(paths.pids)
    assert after.entries["airflow-scheduler"].pid == before.entries["airflow-scheduler"].pid, "Airflow reused"
    assert after.entries["sim"].pid != before.entries["sim"].pid, "a fresh cluster with the fault profile"
    assert json.loads((paths.sim / "sim.json").read_text())["faults"] == ["cross-tenant-logs"]

    recorded = list(after.entries.values())
    stop_everything(paths)
    assert PidFile.load(paths.pids).entries == {}
    deadline = time.monotonic() + 30
    while any(is_alive(e.pid, e.mark) for e in recorded) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [e.name for e in recorded if is_alive(e.pid, e.mark)], "every recorded process stopped"
