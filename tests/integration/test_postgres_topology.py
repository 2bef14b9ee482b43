"""The docker-compose topology run as processes: Debian's PostgreSQL as the metadata database, then
``airflow db migrate`` and the api-server, scheduler, dag-processor and triggerer commands of
docker-compose.yaml with the executor it names. The metadata database reports healthy and a DAG run
completes (its record lands in PostgreSQL).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from .stores import PgCluster, pg_bin_or_skip

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800), pytest.mark.xdist_group("airflow")]

REPO = Path(__file__).resolve().parents[2]
DAG_ID = "gpupoc_topology_check"
DAG_FILE = f'''
"""A trivial DAG: one task on the executor of the deployment."""
from datetime import datetime

from airflow.sdk import dag, task


@dag(dag_id="{DAG_ID}", schedule=None, start_date=datetime(2026, 1, 1), catchup=False, tags=["gpupoc"])
def topology_check():
    @task
    def hello() -> str:
        return "metadata in postgres"

    hello()


topology_check()
'''


def _compose_topology() -> tuple[str, list[str]]:
    """Executor default and the Airflow commands the compose file runs without profiles (besides init)."""
    compose = yaml.safe_load((REPO / "docker-compose.yaml").read_text(encoding="utf-8"))
    executor = compose["x-airflow-common"]["environment"]["AIRFLOW__CORE__EXECUTOR"]
    default = executor.split(":-", 1)[1].rstrip("}") if ":-" in executor else executor
    commands = [s["command"] for n, s in compose["services"].items()
                if n.startswith("airflow-") and isinstance(s.get("command"), str) and not s.get("profiles")]
    return default, commands


@pytest.fixture(scope="module")
def postgres():
    pytest.importorskip("psycopg2", reason="psycopg2-binary is not installed (requirements.txt pins it)")
    pytest.importorskip("asyncpg", reason="asyncpg (the api-server's async PostgreSQL driver) is not installed "
                                          "(requirements.txt pins it)")
    cluster = PgCluster(pg_bin_or_skip())
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def deployment(postgres, tmp_path_factory):
    from gpupoc.airflow_runtime.client import AirflowClient
    from gpupoc.airflow_runtime.processes import COMPONENTS, down, up
    from gpupoc.airflow_runtime.settings import RuntimeSettings, free_port

    executor, commands = _compose_topology()
    assert sorted(commands) == sorted(COMPONENTS), f"compose runs {commands}, the process runtime {list(COMPONENTS)}"
    base = tmp_path_factory.mktemp("topology")
    dags = base / "dags"
    dags.mkdir()
    (dags / "topology_check.py").write_text(textwrap.dedent(DAG_FILE), encoding="utf-8")
    home = base / "home"
    settings = RuntimeSettings(home=home, port=free_port(), parallelism=4, max_active_tasks=4, extra_env={
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": postgres.url,
        "AIRFLOW__CORE__EXECUTOR": executor,
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK": "true",
        "AIRFLOW__SCHEDULER__SCHEDULER_HEALTH_CHECK_SERVER_PORT": str(free_port()),
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
    })
    try:
        state = up(settings, components=commands, wait_healthy=True, timeout=900)
        yield state, AirflowClient.for_home(home, url=state.url), executor
    finally:
        down(home)


def test_compose_executor_is_the_local_executor():
    assert _compose_topology()[0] == "LocalExecutor"


def test_api_server_reports_the_postgres_metadatabase_and_components_healthy(deployment, postgres):
    state, client, _ = deployment
    health = client.health()
    assert health["metadatabase"]["status"] == "healthy", health
    for component in ("scheduler", "triggerer", "dag_processor"):
        assert health[component]["status"] == "healthy", f"{component}: {health}"
    tables = {r[0] for r in postgres.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert {"dag_run", "task_instance", "job", "alembic_version"} <= tables, "migration did not reach postgres"
    jobs = {r[0] for r in postgres.query("SELECT job_type FROM job WHERE state = 'running'")}
    assert {"SchedulerJob", "TriggererJob", "DagProcessorJob"} <= jobs, jobs


def test_a_dag_run_completes_with_the_executor_of_the_compose_file(deployment, postgres):
    state, client, executor = deployment
    client.wait_dag(DAG_ID, timeout=600)
    client.unpause(DAG_ID)
    run = client.trigger(DAG_ID)
    done = client.wait_run(DAG_ID, run["dag_run_id"], timeout=900, poll=1.0)
    assert done["state"] == "success", why_the_run_failed(state.home, client, run["dag_run_id"])
    rows = postgres.query("SELECT state, executor FROM task_instance WHERE dag_id = %s AND run_id = %s",
                          DAG_ID, run["dag_run_id"])
    assert [r[0] for r in rows] == ["success"], rows
    assert postgres.query("SELECT state FROM dag_run WHERE dag_id = %s AND run_id = %s",
                          DAG_ID, run["dag_run_id"]) == [("success",)]


def why_the_run_failed(home: str, client, run_id: str) -> str:
    """The run's task instances and the last lines of its task logs and of the scheduler's log."""
    tis = [{k: ti.get(k) for k in ("task_id", "state", "try_number", "end_date")}
           for ti in client.task_instances(DAG_ID, run_id)]
    logs = sorted((Path(home) / "logs").rglob(f"dag_id={DAG_ID}/**/*.log")) + [Path(home) / "logs" / "scheduler.out"]
    tails = [f"--- {p}\n" + "\n".join(p.read_text(errors="replace").splitlines()[-25:]) for p in logs if p.is_file()]
    return f"task instances {tis}\n" + "\n".join(tails)
