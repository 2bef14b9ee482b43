"""The docker-compose topology run as processes: Debian's PostgreSQL as the metadata database, then
``airflow db migrate`` and the api-server, scheduler, dag-processor and triggerer commands of
docker-compose.yaml with the executor it names. The metadata database reports healthy and a DAG run
completes (its record lands in PostgreSQL).
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
import textwrap
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

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


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


def _compose_topology() -> tuple[str, list[str]]:
    """Executor default and the Airflow commands the compose file runs (besides the init service)."""
    compose = yaml.safe_load((REPO / "docker-compose.yaml").read_text(encoding="utf-8"))
    executor = compose["x-airflow-common"]["environment"]["AIRFLOW__CORE__EXECUTOR"]
    default = executor.split(":-", 1)[1].rstrip("}") if ":-" in executor else executor
    commands = [s["command"] for n, s in compose["services"].items()
                if n.startswith("airflow-") and isinstance(s.get("command"), str)]
    return default, commands


class PgCluster:
    """A private PostgreSQL cluster on a free port of 127.0.0.1, stopped and removed at the end."""

    def __init__(self, bin_dir: Path):
        from gpupoc.airflow_runtime.settings import free_port

        self.bin = bin_dir
        self.dir = Path(tempfile.mkdtemp(prefix="gpupoc-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self.password = secrets.token_urlsafe(16)
        self.as_postgres = os.geteuid() == 0  # the server refuses to run as root
        if self.as_postgres:
            uid = pwd.getpwnam("postgres").pw_uid
            os.chown(self.dir, uid, -1)
        self.dir.chmod(0o700)

    def run(self, *args: str, timeout: float = 120) -> str:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if self.as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(self.dir))
        assert res.returncode == 0, f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}"
        return res.stdout

    def start(self) -> None:
        pwfile = self.dir / "pw"
        pwfile.write_text(self.password + "\n")
        if self.as_postgres:
            os.chown(pwfile, pwd.getpwnam("postgres").pw_uid, -1)
        pwfile.chmod(0o600)
        self.run("initdb", "-D", str(self.data), "-U", "airflow", "--pwfile", str(pwfile), "-E", "UTF8",
                 "--locale=C", "--auth-local=trust", "--auth-host=scram-sha-256")
        pwfile.unlink()
        opts = (f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100")
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.dir / "server.log"), "-o", opts, "-w", "-t", "60",
                 "start")
        import psycopg2

        conn = psycopg2.connect(host="127.0.0.1", port=self.port, user="airflow", password=self.password,
                                dbname="postgres")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE airflow")
        conn.close()

    @property
    def url(self) -> str:
        return f"postgresql+psycopg2://airflow:{self.password}@127.0.0.1:{self.port}/airflow"

    def query(self, sql: str, *params):
        import psycopg2

        with psycopg2.connect(host="127.0.0.1", port=self.port, user="airflow", password=self.password,
                              dbname="airflow") as conn, conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            try:
                self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "30", "stop", timeout=60)
            except AssertionError:
                self.run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres():
    pytest.importorskip("psycopg2", reason="psycopg2-binary is not installed (requirements.txt pins it)")
    pytest.importorskip("asyncpg", reason="asyncpg (the api-server's async PostgreSQL driver) is not installed "
                                          "(requirements.txt pins it)")
    if _pg_bin() is None:
        subprocess.run(["bash", str(REPO / "scripts" / "install-postgres.sh")], check=False, timeout=600)
    bin_dir = _pg_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL could not be installed (scripts/install-postgres.sh: apt-get install postgresql)")
    cluster = PgCluster(bin_dir)
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
        state = up(settings, components=commands, wait_healthy=True, timeout=150)
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
    client.wait_dag(DAG_ID, timeout=90)
    client.unpause(DAG_ID)
    run = client.trigger(DAG_ID)
    done = client.wait_run(DAG_ID, run["dag_run_id"], timeout=120, poll=1.0)
    assert done["state"] == "success", done
    rows = postgres.query("SELECT state, executor FROM task_instance WHERE dag_id = %s AND run_id = %s",
                          DAG_ID, run["dag_run_id"])
    assert [r[0] for r in rows] == ["success"], rows
    assert postgres.query("SELECT state FROM dag_run WHERE dag_id = %s AND run_id = %s",
                          DAG_ID, run["dag_run_id"]) == [("success",)]
