"""A wave pod the platform loses, under a real Airflow: its ``wave`` task says gpupoc's decision, and the run
ends with the item judged.

The simulated cluster runs the ``pod-lost`` fault: the first wave pod to run a second vanishes with no delete
request, audit record or event. A real Airflow (api-server, scheduler, triggerer, dag-processor) runs
poc_queue_congestion on the small wave. The lost pod's ``GpuWorkloadOperator`` task resumes to find its pod
gone, decides it lost from the records the evidence reads, and fails for good saying so ("lost: pod …"), never
the provider's "not found after resuming from deferral". Every task that waits for the wave ends (the run
ends), and TR-01 fails naming the pod, with ``workload_runs`` saying what the task said.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gpupoc.airflow_runtime.client import AirflowClient
from gpupoc.airflow_runtime.processes import down, up
from gpupoc.airflow_runtime.settings import RuntimeSettings, free_port
from gpupoc.exceptions import SourceUnavailable
from gpupoc.pipeline.attempts import TaskDecision
from gpupoc.steps.attempt_decision import task_message

from tests.waiting import wait_for

from .plans import LONGEST_POD_SECONDS, small_plan
from .test_airflow_preemption import task_states

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("airflow")]
DAG_ID = "poc_queue_congestion"
STEP_SECONDS = 3 * (LONGEST_POD_SECONDS + 60)  # no task changing state this long: stalled (a loaded machine)


@pytest.fixture
def work_dir():
    path = Path(tempfile.mkdtemp(prefix="gpupoc-lost-it-"))
    yield path
    if not os.environ.get("GPUPOC_KEEP_WORK"):
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def sim(work_dir):
    from .conftest import launch

    server = launch(work_dir / "sim", faults="pod-lost")
    yield server
    server.stop()


@pytest.fixture
def airflow(work_dir, sim):
    plan = small_plan(work_dir, sim.kubeconfig, sim.audit_log)
    settings = RuntimeSettings(home=work_dir / "airflow", port=free_port(), paused_at_creation=True,
                               extra_env={"GPUPOC_PLAN": str(plan)})
    up(settings)
    try:
        yield settings, plan
    finally:
        down(settings.home)


def wave_logs(home: Path, run_id: str) -> dict[str, str]:
    """Every try's log of the run's ``wave`` tasks, by file."""
    base = home / "logs" / f"dag_id={DAG_ID}" / f"run_id={run_id}" / "task_id=wave"
    return {str(p.relative_to(base)): p.read_text(errors="replace") for p in sorted(base.rglob("*.log"))}


@pytest.mark.timeout(1800)  # a hang guard only: the wait fails first, on a stall, naming what it waited for
def test_a_lost_pods_task_says_gpupocs_decision_and_the_run_ends_with_tr01_failed_naming_it(airflow, sim):
    settings, plan_file = airflow
    af = AirflowClient.for_home(settings.home)
    af.wait_dag(DAG_ID, timeout=600)
    af.unpause(DAG_ID)
    run_id = af.trigger(DAG_ID, {"plan": str(plan_file)})["dag_run_id"]

    def run_state() -> tuple[dict, list[dict]]:
        return af.get_run(DAG_ID, run_id), af.task_instances(DAG_ID, run_id)

    final, tis = wait_for("the run to end", run_state, lambda v: v[0].get("state") in ("success", "failed"),
                          step_seconds=STEP_SECONDS, transient=(SourceUnavailable,), poll=3.0,
                          describe=lambda v: f"run {v[0].get('state')}; tasks: {task_states(v[1])}")
    [rd] = sorted((plan_file.parent / "evidence" / DAG_ID).glob("*"))
    rows = pq.read_table(rd / "tables" / "workload_runs.parquet").to_pylist()
    [lost] = [r for r in rows if r["outcome"] == "lost"]
    decision = TaskDecision.from_dict(json.loads((rd / "files" / f"decision-{lost['item']}-try1.json").read_text()))
    said = task_message(decision)
    assert said.startswith(f"lost: pod {lost['namespace']}/{lost['pod']} ") and lost["outcome_message"] in said
    assert lost["task_outcome"] == "lost", lost
    logs = wave_logs(settings.home, run_id)
    saying = [name for name, text in logs.items() if said in text]
    assert len(saying) == 1, f"one wave task says {said!r}: {saying} of {list(logs)}"
    assert "not found after resuming from deferral" not in logs[saying[0]]
    summary = json.loads((rd / "validation" / "summary.json").read_text())
    [tr01] = [c for s in summary["suites"] for c in s["checks"] if c["check_id"] == "TR-01"]
    assert tr01["verdict"] == "fail" and f"{lost['namespace']}/{lost['pod']}: lost" in tr01["reason"], tr01
    states = {(t["task_id"], t.get("map_index", -1)): str(t["state"]) for t in tis}
    assert states[("observe_services", -1)] == "success" and states[("observe", -1)] == "success", states
    print(f"\nrun {run_id}: {final['state']}; {said}")
