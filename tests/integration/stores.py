"""Private database and broker servers for the deployment topology tests: Debian's PostgreSQL and Redis,
each on a free port of 127.0.0.1 in a temporary directory, stopped by process id and removed at the end.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.waiting import wait_for

REPO = Path(__file__).resolve().parents[2]


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


def pg_bin_or_skip() -> Path:
    """PostgreSQL's bin directory, installed by scripts/install-postgres.sh when missing."""
    if _pg_bin() is None:
        subprocess.run(["bash", str(REPO / "scripts" / "install-postgres.sh")], check=False, timeout=600)
    bin_dir = _pg_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL could not be installed (scripts/install-postgres.sh: apt-get install postgresql)")
    return bin_dir


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


def redis_server_or_skip() -> str:
    """The ``redis-server`` binary, installed by scripts/install-redis.sh when missing."""
    if shutil.which("redis-server") is None:
        subprocess.run(["bash", str(REPO / "scripts" / "install-redis.sh")], check=False, timeout=600)
    path = shutil.which("redis-server")
    if path is None:
        pytest.skip("Redis could not be installed (scripts/install-redis.sh: apt-get install redis-server)")
    return path


class RedisServer:
    """A private Redis (no persistence) on a free port of 127.0.0.1: the Celery broker."""

    def __init__(self, binary: str):
        from gpupoc.airflow_runtime.settings import free_port

        self.binary = binary
        self.dir = Path(tempfile.mkdtemp(prefix="gpupoc-redis-"))
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 30.0) -> None:
        log = (self.dir / "redis.log").open("w")
        self.proc = subprocess.Popen(
            [self.binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.dir), "--save", "",
             "--appendonly", "no", "--protected-mode", "yes", "--daemonize", "no"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        import redis

        def answers() -> bool:
            assert self.proc.poll() is None, f"redis-server exited: {(self.dir / 'redis.log').read_text()}"
            return bool(redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1).ping())

        wait_for(f"redis-server to answer on {self.port}", answers, bool, step_seconds=timeout, poll=0.1,
                 transient=(redis.ConnectionError,))

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)
