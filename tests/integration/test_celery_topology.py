"""docker-compose.yaml's ``celery`` profile run as processes: CeleryExecutor with Debian's Redis as the broker and
PostgreSQL as the metadata database and result backend, two Celery workers, two schedulers (scheduler HA), two
triggerers, the api-server and the dag-processor (``gpupoc.airflow_runtime`` with ``Executor.CELERY``).

Through it the congestion class runs a small wave (8 short pods, 28 GPUs asked of 24) and then the report DAG,
with two restarts on the way: the Celery worker that runs tasks of the run is killed with SIGKILL mid-wave (its
whole process group, as when its container dies) and started again, then one of the two schedulers is killed
and started again. Requirements: no duplicate pod (one pod create per wave item in the API server's audit log,
in what the API showed and in the run's ledger), no lost task (every task of the run succeeds, the killed
worker's included), the evidence complete (every expected table written and verified, the manifest's hashes
intact, no check failed), and the decision that of the same plan on the LocalExecutor: there every congestion
check passes (tests/integration/test_restart_resilience.py), so with the other
classes' evidence of a correct platform and the reviewers' scores the report decides "go live".
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

import pytest

from gpupoc.airflow_runtime.client import AirflowClient
from gpupoc.exceptions import SourceUnavailable
from gpupoc.airflow_runtime.topology import component_alive
from gpupoc.airflow_runtime.processes import down, kill_component, start_component, up
from gpupoc.airflow_runtime.settings import Executor, RuntimeSettings, free_port
from gpupoc.airflow_runtime.topology import Role, components
from gpupoc.airflow_runtime.workers import active, wait_workers
from gpupoc.classes.registry import definition
from gpupoc.evidence.reader import RunEvidence
from tests.waiting import wait_for

from .stores import PgCluster, RedisServer, pg_bin_or_skip, redis_server_or_skip
from .plans import LONGEST_POD_SECONDS, small_plan
from .test_restart_resilience import SELECTOR, WAVE, _failed_checks, _pod_index, _wave_creates, task_states

# The timeout guards against a hang only: the waits below fail first, on a stall, naming what they waited for.
# A trigger that moves to the other triggerer is cancelled by Airflow as if by a user; WavePodTrigger.on_kill
# keeps the pod of a task still deferred (docs/testing.md, "Defects these tests found").
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800), pytest.mark.xdist_group("airflow-restarts")]
DAG_ID = "poc_queue_congestion"
REPORT_DAG = "poc_report"
OTHER_CLASSES = ("tenant_isolation", "utilization", "fault_recovery", "audit_trail")
SCORES = {"reviewer": "Wang Fang", "reviewer_role": "business", "ui_usability": 4, "documentation": 4,
          "training_cost": 4}
# A task whose worker died is failed after this many seconds without a heartbeat, then retried (Airflow: 300).
HEARTBEAT_TIMEOUT_SECONDS = "45"
# a task the killed worker had received but not yet started stays queued (Celery acks it late, Redis redelivers
# it after its visibility timeout); the scheduler requeues it after ``task_queued_timeout``
QUEUED_TIMEOUT_SECONDS = "120"
PAUSE_SECONDS = 3.0
# The longest the run may go with no task changing state: its longest pod, then a killed task's heartbeat
# timeout and retry delay (10 s), three times over for a loaded machine. A wait fails only on such a stall.
STEP_SECONDS = 3 * (LONGEST_POD_SECONDS + int(HEARTBEAT_TIMEOUT_SECONDS) + 10)


class Phases:
    """Wall time of each phase of the test, printed at the end."""

    def __init__(self) -> None:
        self.t0 = self.last = time.monotonic()
        self.rows: list[tuple[str, float]] = []

    def done(self, name: str) -> None:
        now = time.monotonic()
        self.rows.append((name, now - self.last))
        self.last = now

    def __str__(self) -> str:
        return "; ".join(f"{n} {s:.0f} s" for n, s in self.rows) + f"; total {time.monotonic() - self.t0:.0f} s"


@pytest.fixture
def work_dir():
    path = Path(tempfile.mkdtemp(prefix="gpupoc-celery-it-"))
    yield path
    if not os.environ.get("GPUPOC_KEEP_WORK"):
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def phases():
    p = Phases()
    yield p
    print(f"\nphases: {p}")


@pytest.fixture
def stores(phases):
    pytest.importorskip("psycopg2", reason="psycopg2-binary is not installed (requirements.txt pins it)")
    pytest.importorskip("celery", reason="apache-airflow-providers-celery is not installed (requirements.txt pins it)")
    pg, broker = PgCluster(pg_bin_or_skip()), RedisServer(redis_server_or_skip())
    try:
        pg.start()
        broker.start()
        phases.done("postgres and redis")
        yield pg, broker
    finally:
        broker.stop()
        pg.stop()


@pytest.fixture
def sim(work_dir):
    from .conftest import launch

    server = launch(work_dir / "sim")
    yield server
    server.stop()


def _seed_other_classes(evidence_root: Path) -> None:
    """Validated evidence of a correct platform for the four other classes (their DAGs do not run here)."""
    from gpupoc.validation import synthetic as syn
    from gpupoc.validation import validate_run

    for tc in OTHER_CLASSES:
        validate_run(syn.write_run(evidence_root, tc, "scheduled__1", syn.good_tables(tc)))


@pytest.fixture
def celery_airflow(work_dir, sim, stores, phases):
    pg, broker = stores
    plan = small_plan(work_dir, sim.kubeconfig, sim.audit_log)
    _seed_other_classes(work_dir / "evidence")
    phases.done("plan and the other classes' evidence")
    settings = RuntimeSettings(
        home=work_dir / "airflow", port=free_port(), paused_at_creation=True, executor=Executor.CELERY,
        database_url=pg.url, broker_url=broker.url, schedulers=2, triggerers=2, celery_workers=2,
        worker_concurrency=4, extra_env={"GPUPOC_PLAN": str(plan),
                                         "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": HEARTBEAT_TIMEOUT_SECONDS,
                                         "AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT": QUEUED_TIMEOUT_SECONDS,
                                         "AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT_CHECK_INTERVAL": "15",
                                         "AIRFLOW__SCHEDULER__NUM_STUCK_IN_QUEUED_RETRIES": "5"})
    try:
        state = up(settings, timeout=900)
        phases.done(f"airflow up (migrate {state.migrate_seconds:.0f} s, {len(state.pids)} processes)")
        yield settings, plan, pg, broker
    finally:
        down(settings.home)


def _wave_index(task: dict) -> str | None:
    """The map index of a wave task of a Celery ``inspect active`` entry (its workload JSON), else None."""
    key = _task_key(task)
    return str(key[1]) if key and key[0] == "wave" else None


def _task_key(task: dict) -> tuple[str, int] | None:
    """The (task id, map index) of a Celery ``inspect active`` entry of the run's DAG, else None."""
    for arg in task.get("args") or []:
        try:
            ti = (json.loads(arg) if isinstance(arg, str) else arg).get("ti") or {}
        except (ValueError, AttributeError):
            continue
        if ti.get("dag_id") == DAG_ID and ti.get("task_id"):
            index = ti.get("map_index")
            return str(ti["task_id"]), -1 if index is None else int(index)
    return None


# Tasks without retries by design: a service's load generator is not run twice (its requests would be counted
# twice), so killed with its worker it ends failed, as Airflow ends a task without retries.
NO_RETRY = {"service_traffic"}


def _busiest_worker(broker_url: str, workers: list[str]) -> tuple[str, list[dict]] | None:
    """The worker running a wave task of the run, else the one running most tasks; with what it runs."""
    running = active(broker_url)
    ranked = []
    for name in workers:
        tasks = next((t for node, t in running.items() if node.startswith(f"{name}@")), [])
        if tasks:
            ranked.append((any(_wave_index(t) for t in tasks), len(tasks), name, tasks))
    if not ranked:
        return None
    _, _, name, tasks = max(ranked)
    return name, tasks


def _log_tail(home: Path, run_id: str, task_id: str, map_index: int, lines: int = 12) -> str:
    """The last events of every attempt log (worker and triggerer) of one task: why it ended as it did."""
    base = home / "logs" / f"dag_id={DAG_ID}" / f"run_id={run_id}" / f"task_id={task_id}"
    if map_index >= 0:
        base = base / f"map_index={map_index}"
    out = []
    for path in sorted(base.glob("attempt=*.log*")):
        events = []
        for line in path.read_text(errors="replace").splitlines()[-lines:]:
            try:
                e = json.loads(line)
                events.append(f"  {e.get('timestamp', '')[11:23]} {e.get('level')} {str(e.get('event'))[:300]}")
            except ValueError:
                events.append(f"  {line[:300]}")
        out.append(f"{path.name}:\n" + "\n".join(events))
    return "\n".join(out) or f"no logs under {base}"


def test_celery_topology_survives_a_worker_and_a_scheduler_killed_mid_wave(celery_airflow, sim, phases):
    from kubernetes import client as k8s

    settings, plan_file, pg, broker = celery_airflow
    topo = components(settings)
    assert sorted(c.role.value for c in topo.values()) == sorted(
        ["api-server", "dag-processor", "scheduler", "scheduler", "triggerer", "triggerer", "celery-worker",
         "celery-worker"]), sorted(topo)
    workers = [n for n, c in topo.items() if c.role is Role.CELERY_WORKER]
    schedulers = [n for n, c in topo.items() if c.role is Role.SCHEDULER]
    af = AirflowClient.for_home(settings.home)
    core = k8s.CoreV1Api(sim.client("admin", http=True))
    af.wait_dag(DAG_ID, timeout=600)
    af.wait_dag(REPORT_DAG, timeout=600)
    af.unpause(DAG_ID)
    af.unpause(REPORT_DAG)
    phases.done("DAGs parsed")
    run_id = af.trigger(DAG_ID, {"plan": str(plan_file), "faults_note": "a Celery worker and a scheduler killed"})[
        "dag_run_id"]
    seen: dict[str, set[str]] = defaultdict(set)  # map_index -> pod names the API showed

    def look() -> list:
        pods = core.list_pod_for_all_namespaces(label_selector=SELECTOR).items
        for p in pods:
            seen[_pod_index(p)].add(p.metadata.name)
        return pods

    # 1. mid-wave: some wave pod exists and a worker runs tasks of the run (a wave task preferred)
    def busy() -> tuple[list, tuple[str, list[dict]] | None, str]:
        pods = look()
        return pods, _busiest_worker(broker.url, workers) if pods else None, task_states(af.task_instances(DAG_ID, run_id))

    pods, victim, _ = wait_for(
        "a worker busy with a wave task of the run", busy,
        lambda v: v[1] is not None and (any(_wave_index(t) for t in v[1][1]) or len(v[0]) >= WAVE),
        step_seconds=STEP_SECONDS, transient=(SourceUnavailable,), describe=lambda v: f"{len(v[0])} pods; tasks: {v[2]}")
    killed_worker, its_tasks = victim
    its_wave = sorted(i for i in (_wave_index(t) for t in its_tasks) if i is not None)
    at_kill = {(t["task_id"], t.get("map_index", -1)): t["state"] for t in af.task_instances(DAG_ID, run_id)}
    phases.done(f"wave in flight ({len(pods)} pods)")

    # 2. SIGKILL that worker (and its task processes), start it again
    old = kill_component(settings.home, killed_worker, signal.SIGKILL)
    assert not component_alive(old)
    look()
    time.sleep(PAUSE_SECONDS)
    start_component(settings, killed_worker)
    wait_workers(broker.url, [f"{w}@" for w in workers], timeout=600)
    phases.done(f"{killed_worker} killed and back")

    # 3. kill one scheduler of the two; the other one keeps scheduling; start it again
    run = af.get_run(DAG_ID, run_id)
    assert run["state"] == "running", f"the run ended before a scheduler could be killed: {run['state']}"
    killed_scheduler = schedulers[0]
    old = kill_component(settings.home, killed_scheduler, signal.SIGKILL)
    look()
    time.sleep(PAUSE_SECONDS)
    new_scheduler = start_component(settings, killed_scheduler)
    af.wait_healthy(["scheduler", "triggerer"], timeout=600)
    phases.done(f"{killed_scheduler} killed and back")

    # 4. the run ends
    def run_state() -> tuple[dict, str]:
        look()
        return af.get_run(DAG_ID, run_id), task_states(af.task_instances(DAG_ID, run_id))

    final, _ = wait_for("the run to end after the restarts", run_state,
                        lambda v: v[0].get("state") in ("success", "failed"), step_seconds=STEP_SECONDS, transient=(SourceUnavailable,), poll=2.0,
                        describe=lambda v: f"run {v[0].get('state')}; tasks: {v[1]}")
    tis = {(t["task_id"], t.get("map_index", -1)): t for t in af.task_instances(DAG_ID, run_id)}
    states = {k: t["state"] for k, t in tis.items()}
    tries = {f"{k[0]}[{k[1]}]": t.get("try_number") for k, t in tis.items() if (t.get("try_number") or 1) > 1}
    phases.done(f"run {final['state']}")
    print(f"\nkilled {killed_worker} running {[t.get('name') for t in its_tasks]} (wave items {its_wave}); at the "
          f"kill: {sorted(at_kill.items())}; then {killed_scheduler}; after: {sorted(states.items())}; retried: {tries}")
    assert component_alive(new_scheduler), "the restarted scheduler keeps running"

    # no lost task: every task of the run succeeds, the killed worker's included (but a task without retries by
    # design, NO_RETRY, may end failed); the wave went through the operator, so the bulk path's shard task,
    # mapped over no shard, is skipped
    assert states.pop(("bulk_shard", -1), "skipped") == "skipped", states
    killed = {k for k in (_task_key(t) for t in its_tasks) if k}
    for key in [k for k in states if k in killed and k[0] in NO_RETRY]:
        assert states.pop(key) in ("success", "failed"), f"{key} killed with {killed_worker}: {states}"
    for (task_id, index), state in sorted(states.items()):
        if state != "success":
            print(f"\n{task_id}[{index}] {state}:\n{_log_tail(settings.home, run_id, task_id, index)}")
    assert final["state"] == "success" and set(states.values()) == {"success"}, states
    assert sorted(k[1] for k in states if k[0] == "wave") == list(range(WAVE)), states
    # no duplicate pod: one create per wave item in the audit log, in what the API showed and in the ledger
    creates = _wave_creates(sim.audit_events())
    assert sorted(int(c["map_index"]) for c in creates) == list(range(WAVE)), creates
    assert sorted(seen) == sorted(str(i) for i in range(WAVE)) and all(len(v) == 1 for v in seen.values()), \
        f"a wave item had two pods: {dict(seen)}"
    names = {c["name"] for c in creates}
    assert names == {n for v in seen.values() for n in v}
    rd = next((plan_file.parent / "evidence" / DAG_ID).iterdir())
    ledger = [json.loads(x) for x in (rd / "ledger" / "wave.jsonl").read_text().splitlines() if x.strip()]
    assert sorted(e["name"] for e in ledger if e["verb"] == "create") == sorted(names), ledger
    # the evidence is complete: every expected table written and verified, hashes intact, no check failed
    run = RunEvidence.open(rd)
    assert run.problems() == []
    for table in definition("queue_congestion").tables:
        st = run.status(table)
        assert st.verified, f"{table}: not verified ({st.code} {st.args})"
    assert run.load("workload_runs")["pod"].nunique() == WAVE
    assert _failed_checks(rd / "validation" / "summary.json") == []
    assert [p.metadata.name for p in look()] == [], "cleanup deleted the wave's pods"

    # 5. the report: the decision of the same plan on the LocalExecutor
    report_run = af.trigger(REPORT_DAG, {"plan": str(plan_file), **SCORES})["dag_run_id"]
    done = af.wait_run(REPORT_DAG, report_run, timeout=1500, poll=2.0)
    phases.done(f"report {done['state']}")
    assert done["state"] == "success", done
    from gpupoc.plan import load_plan
    from gpupoc.report.airflow import report_out_dir

    report = json.loads((report_out_dir(load_plan(plan_file), report_run) / "report.json").read_text())
    verdicts = {i["id"]: i["verdict"] for i in report["items"]}
    assert report["decision"] == "go-live", (report["decision"], report.get("decision_reasons"))
    assert set(verdicts.values()) == {"pass"}, verdicts
