"""poc_queue_congestion end to end: the simulated cluster, a real Airflow (api-server, scheduler with
LocalExecutor, triggerer, dag-processor) and a small wave beyond capacity (8 pods, 28 GPUs asked of 24)."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from gpupoc.airflow_runtime.client import AirflowClient
from gpupoc.airflow_runtime.processes import down, memory, up
from gpupoc.airflow_runtime.settings import RuntimeSettings, free_port
from gpupoc.pipeline.common import repo_root

pytestmark = pytest.mark.integration
DAG_ID = "poc_queue_congestion"


def small_plan(tmp: Path, kubeconfig: Path, audit_log: Path) -> Path:
    """The default plan with a wave of 8 short pods: training asked 28 GPUs of 24, mixed priorities."""
    plan = yaml.safe_load((repo_root() / "plans" / "default.yaml").read_text())
    plan["platform"]["kubeconfig"] = str(kubeconfig)
    plan["evidence_root"] = str(tmp / "evidence")
    plan["evidence_sources"]["audit_log_path"] = str(audit_log)
    # a window starting tomorrow: unpausing the DAG creates no scheduled run beside the manual one
    tomorrow = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=1)
    plan["window"].update(start=tomorrow.isoformat(), end=(tomorrow + timedelta(days=7)).isoformat())
    durations = {"v-train-8g": 20, "v-train-4g": 15, "v-train-2g": 10, "v-infer-1g": 8}
    for w in plan["workloads"]:
        if w["name"] in durations:
            w["duration_seconds"] = durations[w["name"]]
    qc = plan["test_classes"]["queue_congestion"]
    # priorities without preemption (gpupoc-normal and -low never preempt): every pod runs to its end
    qc["wave"] = [
        {"workload": "v-train-8g", "tenant": "team-vision", "count": 2, "priority_class": "gpupoc-normal"},
        {"workload": "v-train-4g", "tenant": "team-nlp", "count": 2, "priority_class": "gpupoc-normal"},
        {"workload": "v-train-2g", "tenant": "team-nlp", "count": 2, "priority_class": "gpupoc-low"},
        {"workload": "v-infer-1g", "tenant": "team-serving", "count": 2},
    ]
    qc["gate_timeout_seconds"] = 240
    qc["snapshot_interval_seconds"] = 2
    qc["thresholds"]["max_wait_seconds"] = 120
    path = tmp / "plan.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


@pytest.fixture
def work_dir():
    """A private directory: pytest's tmp_path of a long test can be rotated away by parallel test sessions."""
    path = Path(tempfile.mkdtemp(prefix="gpupoc-airflow-it-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def sim(work_dir):
    from .conftest import launch  # tests/integration/conftest.py

    server = launch(work_dir / "sim")
    yield server
    server.stop()


@pytest.fixture
def airflow_up(work_dir, sim):
    tmp_path = work_dir
    plan = small_plan(tmp_path, sim.kubeconfig, sim.audit_log)
    settings = RuntimeSettings(home=tmp_path / "airflow", port=free_port(), paused_at_creation=True,
                               extra_env={"GPUPOC_PLAN": str(plan)})
    t0 = time.monotonic()
    state = up(settings)
    started = time.monotonic() - t0
    try:
        yield settings, state, plan, started
    finally:
        mem = memory(state)
        print(f"\nairflow start-up {started:.1f} s (migrate {state.migrate_seconds:.1f} s); memory at the end: "
              f"RSS {sum(m['rss_mib'] for m in mem.values()):.0f} MiB, PSS {sum(m['pss_mib'] for m in mem.values()):.0f} MiB "
              f"{json.dumps(mem)}")
        down(settings.home)


@pytest.mark.timeout(600)
def test_queue_congestion_evidence_holds_what_happened_on_the_cluster(airflow_up, sim):
    settings, state, plan_file, _ = airflow_up
    client = AirflowClient.for_home(settings.home)
    client.wait_dag(DAG_ID, timeout=120)
    client.unpause(DAG_ID)
    t0 = time.monotonic()
    run = client.trigger(DAG_ID, {"plan": str(plan_file), "faults_note": "none"})
    final = client.wait_run(DAG_ID, run["dag_run_id"], timeout=480, poll=5)
    wall = time.monotonic() - t0
    tis = {(t["task_id"], t.get("map_index", -1)): t["state"] for t in client.task_instances(DAG_ID, run["dag_run_id"])}
    print(f"\nrun {run['dag_run_id']}: {final['state']} in {wall:.0f} s; tasks {tis}")

    for summary_file in (plan_file.parent / "evidence" / DAG_ID).glob("*/validation/summary.json"):
        failed = [c for c in json.loads(summary_file.read_text()).get("checks", []) if c.get("verdict") != "pass"]
        print("checks not passed:", json.dumps(failed, default=str)[:4000])
    wave_states = [s for (tid, _), s in tis.items() if tid == "wave"]
    assert wave_states == ["success"] * 8, f"every mapped pod task succeeds: {tis}"
    for tid in ("validate_plan", "check_access", "hold_cluster", "cluster_acquired", "release_gate", "wave_released",
                "observe", "collect_evidence", "validate", "publish_evidence", "cleanup", "verdict"):
        assert tis[(tid, -1)] == "success", f"{tid}: {tis}"

    scheduler_log = (settings.home / "logs" / "scheduler.out").read_text(errors="replace")
    assert "gpupoc preload: task modules loaded" in scheduler_log, "the scheduler preloaded the task modules"
    run_dirs = list((plan_file.parent / "evidence" / DAG_ID).iterdir())
    assert len(run_dirs) == 1
    rd = run_dirs[0]
    manifest = json.loads((rd / "manifest.json").read_text())
    runs = pq.read_table(rd / "tables" / "workload_runs.parquet").to_pylist()
    assert len(runs) == 8 and {r["phase"] for r in runs} == {"Succeeded"}, runs
    assert all(r["submitted_at"] and r["released_at"] and r["scheduled_at"] and r["finished_at"] for r in runs)

    lease = json.loads((rd / "files" / "lease.json").read_text())
    assert lease["pool"] == "gpupoc_cluster"
    assert lease["acquired_at"] <= min(r["submitted_at"] for r in runs).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), \
        "the class held the cluster before its first pod existed"

    release = json.loads((rd / "files" / "release.json").read_text())
    assert release["found"] == 8 and release["missing"] == [] and not release["errors"]
    assert len({r["released_at"] for r in release["rows"]}) == 1, "one release moment for the whole wave"
    assert release["release_spread_seconds"] == 0
    assert release["observer_ready"] is True, "the observer watched before the gate was lifted"
    observing = json.loads((rd / "files" / "observing.json").read_text())
    assert observing["first_snapshot_at"] <= min(r["released_at"] for r in runs).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert all(r["released_at"] >= r["submitted_at"] for r in runs), "no pod was scheduled before its release"
    # conditions carry whole seconds (lastTransitionTime), the release microseconds
    assert all(r["scheduled_at"] >= r["released_at"] - timedelta(seconds=1) for r in runs), "gated until released"

    waited = [r for r in runs if r["wait_seconds"] and r["wait_seconds"] > 5]
    assert waited, f"28 GPUs asked of 24: some training pod waits ({[(r['pod'], r['wait_seconds']) for r in runs]})"
    assert all(r["pool"] == "training" for r in waited)
    assert all((r["wait_seconds"] or 0) < 3 for r in runs if r["pool"] == "inference")

    expl = {e["pod"]: e for e in pq.read_table(rd / "tables" / "explanations.parquet").to_pylist()}
    for r in waited:
        e = expl[r["pod"]]
        assert e["explained"] is True, f"the platform explained {r['pod']}: {e}"
        assert "Insufficient nvidia.com/gpu" in (e["platform_message"] or ""), e
        assert e["reconstructed_bottleneck"] in ("insufficient_gpus", "fragmentation"), e
    snaps = pq.read_table(rd / "tables" / "queue_snapshots.parquet").to_pylist()
    assert any(s["reason"] in ("Unschedulable", "FailedScheduling") for s in snaps)
    summary = manifest["summary"]
    assert summary["explained_ratio"] == 1.0 and summary["needing_explanation"] == len(waited)
    assert {"workload_runs", "queue_snapshots", "explanations", "platform_info"} <= set(manifest["tables"])
    # cleanup deleted the kept pods
    left = sim.kubectl("get", "pods", "-A", "-l", "gpupoc.io/test-class=queue_congestion", "-o", "name")
    assert left.stdout.strip() == "", left.stdout
