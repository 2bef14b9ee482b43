"""Restarts lose nothing: poc_queue_congestion survives its scheduler and triggerer being killed mid-wave.

The simulated cluster and a real Airflow (api-server, scheduler with LocalExecutor, triggerer, dag-processor)
run the congestion class with a small wave (8 pods). Once every wave pod exists and some wave tasks are
deferred, the scheduler and the triggerer are killed with SIGKILL (each with its whole process group: executor
workers and running task processes die too, as when their container dies), and started again a few seconds
later with the same configuration. The run must still end, with every wave task successful, no workload
submitted twice (one pod create per wave task in the audit log and in what the API showed) and complete
evidence.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gpupoc.airflow_runtime.client import AirflowClient
from gpupoc.exceptions import SourceUnavailable
from gpupoc.airflow_runtime.topology import component_alive
from gpupoc.airflow_runtime.processes import down, kill_component, start_component, up
from gpupoc.airflow_runtime.settings import RuntimeSettings, config_sections, free_port
from gpupoc.classes.registry import definition

from tests.waiting import wait_for

from .plans import LONGEST_POD_SECONDS, small_plan

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("airflow-restarts")]
DAG_ID = "poc_queue_congestion"
WAVE = 8
SELECTOR = "gpupoc.io/test-class=queue_congestion"
PAUSE_SECONDS = 4.0
# A scheduler re-queues the tasks of a dead scheduler only once that one's heartbeat is older than
# scheduler_health_check_threshold (30 s), checked every orphaned_tasks_check_interval (Airflow: 300 s).
ORPHAN_CHECK_SECONDS = "20"
# The longest the run may go with no task changing state: its longest pod, then the adoption of orphaned
# tasks (health threshold and check interval) and a retry delay (10 s), three times over for a loaded machine.
STEP_SECONDS = 3 * (LONGEST_POD_SECONDS + 30 + int(ORPHAN_CHECK_SECONDS) + 10)


@pytest.fixture
def work_dir():
    path = Path(tempfile.mkdtemp(prefix="gpupoc-restart-it-"))
    yield path
    if not os.environ.get("GPUPOC_KEEP_WORK"):
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def sim(work_dir):
    from .conftest import launch

    server = launch(work_dir / "sim")
    yield server
    server.stop()


@pytest.fixture
def airflow(work_dir, sim):
    plan = small_plan(work_dir, sim.kubeconfig, sim.audit_log)
    env = {"GPUPOC_PLAN": str(plan)}
    probe = RuntimeSettings(home=work_dir / "airflow")
    if "orphaned_tasks_check_interval" not in config_sections(probe).get("scheduler", {}):
        env["AIRFLOW__SCHEDULER__ORPHANED_TASKS_CHECK_INTERVAL"] = ORPHAN_CHECK_SECONDS
    settings = RuntimeSettings(home=work_dir / "airflow", port=free_port(), paused_at_creation=True, extra_env=env)
    up(settings)
    try:
        yield settings, plan
    finally:
        down(settings.home)




def task_states(tis: list[dict]) -> str:
    """Every task instance as ``task[map index] state#try`` (what a wait prints and watches for progress)."""
    rows = sorted((t["task_id"], t.get("map_index", -1), str(t["state"]), t.get("try_number") or 0) for t in tis)
    return ", ".join(f"{t}{f'[{i}]' if i >= 0 else ''} {st}#{n}" for t, i, st, n in rows)


def _failed_checks(summary_path: Path) -> list[dict]:
    summary = json.loads(summary_path.read_text())
    return [{k: c.get(k) for k in ("check_id", "table", "reason")}
            for suite in summary.get("suites", []) for c in suite.get("checks", []) if c.get("verdict") == "fail"]


def _pod_index(pod) -> str:
    labels = pod.metadata.labels or {}
    return labels.get("map_index", "")


def _wave_creates(audit: list[dict]) -> list[dict]:
    """Successful pod creations of the congestion wave, as the API server's audit log recorded them."""
    out = []
    for ev in audit:
        ref = ev.get("objectRef") or {}
        if ev.get("verb") != "create" or ref.get("resource") != "pods" or ref.get("subresource"):
            continue
        if (ev.get("responseStatus") or {}).get("code") not in (200, 201):
            continue
        labels = ((ev.get("requestObject") or {}).get("metadata") or {}).get("labels") or {}
        if labels.get("gpupoc.io/test-class") == "queue_congestion" and labels.get("task_id") == "wave":
            out.append({"name": ref.get("name") or (ev.get("responseObject") or {}).get("metadata", {}).get("name"),
                        "namespace": ref.get("namespace"), "map_index": labels.get("map_index"),
                        "run_id": labels.get("run_id")})
    return out


@pytest.mark.timeout(1800)  # a hang guard only: the waits fail first, on a stall, naming what they waited for
def test_killing_scheduler_and_triggerer_mid_wave_loses_and_duplicates_nothing(airflow, sim):
    from kubernetes import client as k8s

    settings, plan_file = airflow
    af = AirflowClient.for_home(settings.home)
    core = k8s.CoreV1Api(sim.client("admin", http=True))
    af.wait_dag(DAG_ID, timeout=600)
    af.unpause(DAG_ID)
    t0 = time.monotonic()
    run = af.trigger(DAG_ID, {"plan": str(plan_file), "faults_note": "scheduler and triggerer killed mid-wave"})
    run_id = run["dag_run_id"]
    seen: dict[str, set[str]] = defaultdict(set)  # map_index -> pod names the API showed

    def look() -> list:
        pods = core.list_pod_for_all_namespaces(label_selector=SELECTOR).items
        for p in pods:
            seen[_pod_index(p)].add(p.metadata.name)
        return pods

    # 1. wait until the whole wave exists and wave tasks are deferred
    def in_flight() -> tuple[list, list[dict]]:
        return look(), af.task_instances(DAG_ID, run_id)

    pods, tis = wait_for(
        "the whole wave in flight (every pod created, wave tasks deferred)", in_flight,
        lambda v: len(v[0]) >= WAVE and any(t["task_id"] == "wave" and t["state"] == "deferred" for t in v[1]),
        step_seconds=STEP_SECONDS, transient=(SourceUnavailable,), poll=1.0, describe=lambda v: f"{len(v[0])} pods; tasks: {task_states(v[1])}")
    at_kill = sorted((t["task_id"], t.get("map_index", -1), t["state"]) for t in tis)
    kill_s = time.monotonic() - t0

    # 2. crash both components (whole process groups), then start them again with the same configuration
    old = {name: kill_component(settings.home, name, signal.SIGKILL) for name in ("scheduler", "triggerer")}
    for pid in old.values():
        assert not component_alive(pid)
    look()
    time.sleep(PAUSE_SECONDS)
    new = {name: start_component(settings, name) for name in ("scheduler", "triggerer")}
    assert all(new[n] != old[n] for n in new)
    af.wait_healthy(["scheduler", "triggerer"], timeout=600)

    # 3. the run still ends
    def run_state() -> tuple[dict, list[dict]]:
        look()
        return af.get_run(DAG_ID, run_id), af.task_instances(DAG_ID, run_id)

    final, _ = wait_for("the run to end after the restart", run_state,
                        lambda v: v[0].get("state") in ("success", "failed"), step_seconds=STEP_SECONDS, transient=(SourceUnavailable,), poll=2.0,
                        describe=lambda v: f"run {v[0].get('state')}; tasks: {task_states(v[1])}")
    wall = time.monotonic() - t0
    tis = {(t["task_id"], t.get("map_index", -1)): t for t in af.task_instances(DAG_ID, run_id)}
    states = {k: t["state"] for k, t in tis.items()}
    print(f"\nrun {run_id}: {final['state']} in {wall:.0f} s; killed at {kill_s:.0f} s with tasks {at_kill}; "
          f"after: {states}; tries: {({k: t.get('try_number') for k, t in tis.items() if t.get('try_number', 1) > 1})}")
    assert all(component_alive(p) for p in new.values()), "the restarted components keep running"

    wave = {k: s for k, s in states.items() if k[0] == "wave"}
    assert len(wave) == WAVE and set(wave.values()) == {"success"}, f"every wave task succeeds: {states}"
    for tid in ("collect_evidence", "validate", "publish_evidence", "cleanup"):
        assert states[(tid, -1)] == "success", f"{tid}: {states}"

    # 4. nothing submitted twice: the audit log and what the API showed agree on one pod per wave task
    creates = _wave_creates(sim.audit_events())
    assert len(creates) == WAVE, f"one pod create per wave task, got {len(creates)}: {creates}"
    assert len({c["name"] for c in creates}) == WAVE
    assert sorted(int(c["map_index"]) for c in creates) == list(range(WAVE)), creates
    assert {c["run_id"] for c in creates} == {creates[0]["run_id"]}
    assert sorted(seen) == sorted(str(i) for i in range(WAVE)), dict(seen)
    assert all(len(names) == 1 for names in seen.values()), f"a wave task had two pods: {dict(seen)}"
    assert {c["name"] for c in creates} == {n for names in seen.values() for n in names}

    # 5. the evidence is complete
    run_dirs = list((plan_file.parent / "evidence" / DAG_ID).iterdir())
    assert len(run_dirs) == 1
    rd = run_dirs[0]
    manifest = json.loads((rd / "manifest.json").read_text())
    assert set(definition("queue_congestion").tables) <= set(manifest["tables"]), manifest["tables"]
    for table in definition("queue_congestion").tables:
        assert (rd / "tables" / f"{table}.parquet").is_file(), table
    runs = pq.read_table(rd / "tables" / "workload_runs.parquet").to_pylist()
    assert len(runs) == WAVE and {r["pod"] for r in runs} == {c["name"] for c in creates}, runs
    assert {r["phase"] for r in runs} == {"Succeeded"}, [(r["pod"], r["phase"]) for r in runs]
    release = json.loads((rd / "files" / "release.json").read_text())
    assert release["found"] == WAVE and release["missing"] == [] and not release["errors"], release
    assert release["release_spread_seconds"] is not None, "the gate release measured its spread"
    print(f"gates of the {WAVE} pods lifted within {release['release_spread_seconds']:.3f} s")
    # 6. the run succeeds: a wait the observer missed while the scheduler was down is judged from the
    #    platform's scheduling events, so no check fails for what nobody watched
    failed = _failed_checks(rd / "validation" / "summary.json")
    assert final["state"] == "success" and failed == [], (final["state"], failed)
    expl = pq.read_table(rd / "tables" / "explanations.parquet").to_pylist()
    assert all(e["explained"] is not False for e in expl), expl
    left = core.list_pod_for_all_namespaces(label_selector=SELECTOR).items
    assert [p.metadata.name for p in left] == [], "cleanup deleted the wave's pods"
