"""Under ``events-dropped``, preempted wave pods are resubmitted by their Airflow tasks, and Airflow and the
evidence tell the same story.

The simulated cluster drops every Warning event and staggers its gate releases. The wave is 24 low-priority
sweeps that fill the training pool; once most of them run, the test itself submits two high-priority 8-GPU
jobs, as another team would, and these preempt sweeps whatever the machine's load (when the jobs were wave
items, a loaded Airflow could start them after the sweeps had ended, and nothing was preempted). A real Airflow (api-server, scheduler with LocalExecutor,
triggerer, dag-processor) runs poc_queue_congestion. The preempted pods' ``GpuWorkloadOperator`` tasks decide
how their pods ended from the records the evidence reads (the audit log's delete by the scheduler among them),
so none fails as lost: each is retried, its retry submits the item again, and ``workload_runs`` records the
same outcome for every attempt as the task did. The observer waits only for attempts that come.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from gpupoc.airflow_runtime.client import AirflowClient
from gpupoc.airflow_runtime.processes import down, up
from gpupoc.airflow_runtime.settings import RuntimeSettings, free_port
from gpupoc.dags.factory import WAVE_RETRY_DELAY_SECONDS
from gpupoc.exceptions import SourceUnavailable

from tests.waiting import wait_for

from .plans import small_plan

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("airflow")]
DAG_ID = "poc_queue_congestion"
SWEEP_SECONDS, TRAIN_SECONDS = 25, 10
# The longest the run may go with no task changing state: a sweep's run, its preemption's decision (the task
# reads again for a few seconds when nothing says why yet), the retry delay and the 8-GPU job it waits behind,
# three times over for a loaded machine.
STEP_SECONDS = 3 * (SWEEP_SECONDS + 10 + WAVE_RETRY_DELAY_SECONDS + TRAIN_SECONDS)


@pytest.fixture
def work_dir():
    path = Path(tempfile.mkdtemp(prefix="gpupoc-preempt-it-"))
    yield path
    if not os.environ.get("GPUPOC_KEEP_WORK"):
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def sim(work_dir):
    from .conftest import launch

    server = launch(work_dir / "sim", faults="events-dropped", behaviours="release-staggered", behaviour_seed=1)
    yield server
    server.stop()


def preempting_plan(work_dir: Path, sim) -> Path:
    """The small plan with low-priority sweeps filling the training pool (the preemptors come from the test)."""
    path = small_plan(work_dir, sim.kubeconfig, sim.audit_log)
    plan = yaml.safe_load(path.read_text())
    for w in plan["workloads"]:
        if w["name"] == "v-sweep-1g":
            w["duration_seconds"] = SWEEP_SECONDS
    qc = plan["test_classes"]["queue_congestion"]
    qc["wave"] = [{"workload": "v-sweep-1g", "tenant": "team-vision", "count": 12, "priority_class": "gpupoc-low"},
                  {"workload": "v-sweep-1g", "tenant": "team-nlp", "count": 12, "priority_class": "gpupoc-low"}]
    qc["resubmission"] = {"limit": 2, "platform_requeues": False, "wait_seconds": 60}
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


@pytest.fixture
def airflow(work_dir, sim):
    plan = preempting_plan(work_dir, sim)
    settings = RuntimeSettings(home=work_dir / "airflow", port=free_port(), paused_at_creation=True,
                               extra_env={"GPUPOC_PLAN": str(plan)})
    up(settings)
    try:
        yield settings, plan
    finally:
        down(settings.home)


def task_states(tis: list[dict]) -> str:
    """Every task instance as ``task[map index] state#try`` (what the wait prints and watches for progress)."""
    rows = sorted((t["task_id"], t.get("map_index", -1), str(t["state"]), t.get("try_number") or 0) for t in tis)
    return ", ".join(f"{t}{f'[{i}]' if i >= 0 else ''} {st}#{n}" for t, i, st, n in rows)


def wait_run(af: AirflowClient, run_id: str) -> dict:
    """Until the run ends, while its tasks keep moving; a poll a busy API server did not answer is asked again."""
    def run_state() -> tuple[dict, list[dict]]:
        return af.get_run(DAG_ID, run_id), af.task_instances(DAG_ID, run_id)

    final, _ = wait_for("the run to end", run_state, lambda v: v[0].get("state") in ("success", "failed"),
                        step_seconds=STEP_SECONDS, transient=(SourceUnavailable,), poll=3.0,
                        describe=lambda v: f"run {v[0].get('state')}; tasks: {task_states(v[1])}")
    return final


def preemptor(name: str) -> dict:
    """A high-priority 8-GPU job of team-vision's on the training pool, outside the wave (no run labels)."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "team-vision"},
            "spec": {"restartPolicy": "Never", "priorityClassName": "gpupoc-high",
                     "nodeSelector": {"gpupoc.io/pool": "training"},
                     "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                     "containers": [{"name": "main", "image": "gpupoc/virtual:1",
                                     "env": [{"name": "WORKLOAD_DURATION_SECONDS", "value": str(TRAIN_SECONDS)}],
                                     "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}


def submit_preemptors_once_the_sweeps_run(sim) -> None:
    """When at least 20 of the 24 sweeps run (so the two jobs' 16 GPUs can only come from preempting some),
    submit the two jobs as the cluster's admin."""
    from kubernetes import client

    api = client.CoreV1Api(sim.client("admin"))

    def sweeps() -> tuple[int, int]:
        pods = [p for ns in ("team-vision", "team-nlp") for p in api.list_namespaced_pod(ns).items
                if p.metadata.name.startswith("qc-v-sweep")]
        return len(pods), sum(1 for p in pods if p.status.phase == "Running")

    # progress is a pod created as well as one running: Airflow creates the wave's pods before the release
    wait_for("20 of the 24 sweeps to run", sweeps, lambda n: n[1] >= 20, step_seconds=STEP_SECONDS, poll=0.5,
             describe=lambda n: f"{n[0]} sweeps created, {n[1]} running")
    for i in (1, 2):
        api.create_namespaced_pod("team-vision", preemptor(f"other-team-train-8g-{i}"))


@pytest.mark.timeout(1800)  # a hang guard only: the wait fails first, on a stall, naming what it waited for
def test_preempted_pods_are_resubmitted_and_airflow_and_the_evidence_agree_when_events_are_dropped(airflow, sim):
    settings, plan_file = airflow
    af = AirflowClient.for_home(settings.home)
    af.wait_dag(DAG_ID, timeout=600)
    af.unpause(DAG_ID)
    run_id = af.trigger(DAG_ID, {"plan": str(plan_file)})["dag_run_id"]
    submit_preemptors_once_the_sweeps_run(sim)
    final = wait_run(af, run_id)
    tis = {(t["task_id"], t.get("map_index", -1)): t for t in af.task_instances(DAG_ID, run_id)}
    runs = sorted((plan_file.parent / "evidence" / DAG_ID).glob("*"))
    assert len(runs) == 1, f"run {final.get('state')}, no evidence: {[(k, t['state']) for k, t in tis.items()]}"
    rd = runs[0]
    rows = pq.read_table(rd / "tables" / "workload_runs.parquet").to_pylist()
    items = json.loads((rd / "files" / "observer_end.json").read_text())
    preempted = [r for r in rows if r["outcome"] == "preempted"]
    states = {k: (t["state"], t.get("try_number")) for k, t in tis.items() if k[0] == "wave"}
    print(f"\nrun {run_id}: {final['state']}; wave tasks {states}; outcomes "
          f"{sorted((r['pod'], r['attempt'], r['outcome'], r['task_outcome']) for r in rows)}")
    assert preempted, f"no preemption: the run proves nothing ({[(r['pod'], r['outcome']) for r in rows]})"
    assert "lost" not in {r["outcome"] for r in rows} | {r["task_outcome"] for r in rows}
    assert all(r["task_outcome"] == r["outcome"] for r in rows if r["task_outcome"]), rows
    assert {r["outcome_source"] for r in preempted} <= {"audit log", "condition DisruptionTarget", "event"}
    # each item's task tried once per attempt the pipeline submitted (its submissions carry Airflow's try number)
    subs = [json.loads(p.read_text()) for p in (rd / "files").glob("submission-*.json")]
    by_item: dict[str, list[dict]] = {}
    for r in rows:
        by_item.setdefault(r["item"], []).append(r)
    for item, attempts in by_item.items():
        attempts.sort(key=lambda r: r["attempt"])
        assert all(a["outcome"] in ("preempted", "evicted") for a in attempts[:-1]), \
            f"{item}: only a preemption or eviction is followed by another attempt: {attempts}"
        assert attempts[-1]["outcome"] == "succeeded", attempts
        tries = sorted(s["try_number"] for s in subs if s["item"] == item)
        assert tries == list(range(1, len(attempts) + 1)), f"{item}: one Airflow try per attempt: {tries}"
    failed = {k: v for k, v in states.items() if v[0] != "success"}
    assert not failed, f"every wave task ends in success after its retries: {failed}"
    assert items["open_at_deadline"] == [] and all(a["came"] for a in items["awaited"]), items
