"""Configuration of the local Airflow deployment, written by code into ``$AIRFLOW_HOME/airflow.cfg``.

By default a SQLite metadata database and the LocalExecutor; with ``database_url`` PostgreSQL, and with
``executor=Executor.CELERY`` the CeleryExecutor (broker and result backend), as docker-compose.yaml's
``celery`` profile runs it. The repository's ``dags/`` and ``plugins/`` folders, the simple auth manager with
one admin user and the plan's reviewers (``users``, role USER), whose passwords are generated once and kept
in the home directory.
"""

from __future__ import annotations

import configparser
import json
import os
import secrets
import socket
import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_HOME = REPO_ROOT / ".airflow"
ADMIN_USER = "admin"
PASSWORDS_FILE = "simple_auth_manager_passwords.json.generated"
STATE_FILE = "gpupoc-runtime.json"
PRELOAD_DIR = Path(__file__).resolve().parent / "preload"  # holds the scheduler's sitecustomize.py
# Pools the pipeline's DAGs use: name -> (slots, description). See gpupoc.dag_factory.cluster_pool().
# SQLite's busy timeout for every Airflow process (Python's default is 5 s): four components starting at
# once on a loaded host write the same file, and a write that waits out 5 s kills the dag-processor.
SQLITE_CONNECT_ARGS = {"timeout": 60}
POOLS = {"gpupoc_cluster": (1, "one test class at a time holds the cluster's GPUs (gate release to wave end)")}


class Executor(str, Enum):
    """The executors the local deployment can run (``[core] executor``)."""

    LOCAL = "LocalExecutor"
    CELERY = "CeleryExecutor"


@dataclass(frozen=True)
class RuntimeSettings:
    """Where Airflow lives, which executor and metadata database it uses, and how hard it may work.

    On SQLite (no ``database_url``) ``max_active_tasks`` stays at most 16, above which SQLite answers
    "database is locked" under a wave, and one scheduler runs. Deferred tasks free their executor slot, so
    ``parallelism`` bounds only tasks actually running. The CeleryExecutor needs ``database_url`` (PostgreSQL)
    and ``broker_url`` (Redis); its task states go to ``result_backend`` (default: the metadata database).
    """

    home: Path = DEFAULT_HOME
    port: int = 8080
    repo: Path = REPO_ROOT
    parallelism: int = 12
    max_active_tasks: int = 16
    max_active_runs: int = 4
    parsing_processes: int = 1
    paused_at_creation: bool = False
    preload: bool = True  # scheduler and Celery workers preload the task modules before forking (preload/)
    extra_env: dict[str, str] = field(default_factory=dict)
    executor: Executor = Executor.LOCAL
    database_url: str = ""  # SQLAlchemy URL of the metadata database; empty: SQLite under ``home``
    broker_url: str = ""  # CeleryExecutor: the Celery broker, e.g. redis://127.0.0.1:6379/0
    result_backend: str = ""  # CeleryExecutor: empty means db+<database_url>
    schedulers: int = 1  # more than one is Airflow's scheduler HA (PostgreSQL only)
    triggerers: int = 1
    celery_workers: int = 2  # CeleryExecutor only
    worker_concurrency: int = 4  # task slots of each Celery worker
    # Users beside admin, with the simple auth manager's USER role (read everything, trigger DAG runs): the
    # plan's reviewers, who sign off in the poc_report trigger form as themselves (gpupoc.report.signin).
    users: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("parallelism", "schedulers", "triggerers", "celery_workers", "worker_concurrency"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected a positive integer, got {getattr(self, name)}")
        bad = [u for u in self.users if u == ADMIN_USER or not u or any(c in u for c in ":, ")]
        if bad:
            raise ValueError(f"users: expected user names other than {ADMIN_USER!r} without ':', ',' or spaces, "
                             f"got {bad}")
        if self.on_sqlite:
            if not 1 <= self.max_active_tasks <= 16:
                raise ValueError(f"max_active_tasks: expected 1..16 on SQLite, got {self.max_active_tasks}; "
                                 "above 16 the scheduler dies with 'database is locked'")
            if self.schedulers > 1:
                raise ValueError(f"schedulers: SQLite allows one scheduler, got {self.schedulers}; give "
                                 "database_url (PostgreSQL) to run several")
        if self.executor is Executor.CELERY:
            if self.on_sqlite:
                raise ValueError(f"database_url: the CeleryExecutor needs PostgreSQL, got {self.database_url!r}; "
                                 "give postgresql+psycopg2://user:password@host:port/db")
            if not self.broker_url:
                raise ValueError("broker_url: the CeleryExecutor needs a broker, got ''; give the Redis URL, "
                                 "e.g. redis://127.0.0.1:6379/0")

    @property
    def metadata_url(self) -> str:
        """The metadata database the processes use: an ``AIRFLOW__DATABASE__SQL_ALCHEMY_CONN`` in ``extra_env``
        (as docker-compose sets it) wins over ``database_url``; empty means SQLite under ``home``."""
        return self.extra_env.get("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN") or self.database_url

    @property
    def on_sqlite(self) -> bool:
        return not self.metadata_url or self.metadata_url.startswith("sqlite")

    @property
    def celery_result_backend(self) -> str:
        return self.result_backend or f"db+{self.database_url}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def config_path(self) -> Path:
        return self.home / "airflow.cfg"

    @property
    def state_path(self) -> Path:
        return self.home / STATE_FILE

    @property
    def passwords_path(self) -> Path:
        return self.home / PASSWORDS_FILE


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _secret(existing: configparser.ConfigParser, section: str, key: str, make) -> str:
    """Keep a secret across rewrites of the config (tokens and encrypted fields stay valid)."""
    if existing.has_option(section, key) and existing.get(section, key, raw=True).strip():
        return existing.get(section, key, raw=True)
    return make()


def _fernet_key() -> str:
    import base64

    return base64.urlsafe_b64encode(os.urandom(32)).decode()


def config_sections(s: RuntimeSettings, existing: configparser.ConfigParser | None = None) -> dict[str, dict[str, str]]:
    """The airflow.cfg content as sections of options (everything else keeps Airflow's defaults)."""
    old = existing or configparser.ConfigParser(interpolation=None)
    home = s.home.resolve()
    return {
        "core": {
            "dags_folder": str(s.repo / "dags"),
            "plugins_folder": str(s.repo / "plugins"),
            "executor": s.executor.value,
            "load_examples": "False",
            "dags_are_paused_at_creation": str(s.paused_at_creation),
            "parallelism": str(s.parallelism),
            "max_active_tasks_per_dag": str(s.max_active_tasks),
            "max_active_runs_per_dag": str(s.max_active_runs),
            "auth_manager": "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager",
            "simple_auth_manager_users": ",".join([f"{ADMIN_USER}:admin", *(f"{u}:user" for u in s.users)]),
            "simple_auth_manager_passwords_file": str(home / PASSWORDS_FILE),
            "execution_api_server_url": f"{s.url}/execution/",
            "fernet_key": _secret(old, "core", "fernet_key", _fernet_key),
            "dagbag_import_timeout": "60",
        },
        "database": {"sql_alchemy_conn": s.database_url or f"sqlite:///{home / 'airflow.db'}",
                     **({"sql_alchemy_connect_args": f"{__name__}.SQLITE_CONNECT_ARGS",
                         "sql_alchemy_connect_args_async": f"{__name__}.SQLITE_CONNECT_ARGS"} if s.on_sqlite else {})},
        "api": {
            "host": "127.0.0.1",
            "port": str(s.port),
            "base_url": s.url,
            "workers": "1",
            "expose_config": "True",
            "secret_key": _secret(old, "api", "secret_key", lambda: secrets.token_urlsafe(32)),
        },
        "api_auth": {"jwt_secret": _secret(old, "api_auth", "jwt_secret", lambda: secrets.token_urlsafe(32))},
        # an idle scheduler looks again after 0.25 s: each hop from a task to the next waits up to one look
        # (at 0.5 s a bulk wave's shards started some 2 s later, seven hops after the trigger)
        "scheduler": {"scheduler_idle_sleep_time": "0.25", "task_queued_timeout": "900",
                      # tasks orphaned by a scheduler restart are adopted or failed within 20 s, not ~300 s
                      "orphaned_tasks_check_interval": "20"},
        "dag_processor": {
            "refresh_interval": "10",
            "min_file_process_interval": "300",
            "parsing_processes": str(s.parsing_processes),
            "stale_dag_threshold": "120",
        },
        # a wave of 1,000 pods defers 1,000 triggers, beside the classes' lease and release sensors
        "triggerer": {"capacity": "2000"},
        "logging": {"base_log_folder": str(home / "logs"), "colored_console_log": "False"},
        **({"celery": celery_options(s)} if s.executor is Executor.CELERY else {}),
    }


def celery_options(s: RuntimeSettings) -> dict[str, str]:
    """The ``[celery]`` section: broker, result backend and the slots of each worker."""
    return {"broker_url": s.broker_url, "result_backend": s.celery_result_backend,
            "worker_concurrency": str(s.worker_concurrency)}


def write_config(s: RuntimeSettings) -> Path:
    """Write airflow.cfg (secrets kept from a previous config) and the admin password file."""
    s.home.mkdir(parents=True, exist_ok=True)
    existing = configparser.ConfigParser(interpolation=None)
    if s.config_path.exists():
        existing.read(s.config_path)
    cfg = configparser.ConfigParser(interpolation=None)
    for section, options in config_sections(s, existing).items():
        cfg[section] = {k: v.replace("%", "%%") for k, v in options.items()}
    with s.config_path.open("w", encoding="utf-8") as fh:
        fh.write("# Written by `gpupoc airflow up`; rewritten on every start.\n")
        cfg.write(fh)
    passwords = json.loads(s.passwords_path.read_text(encoding="utf-8")) if s.passwords_path.exists() else {}
    missing = [u for u in (ADMIN_USER, *s.users) if u not in passwords]
    if missing:  # each user's password is made once and kept (the simple auth manager reads this file)
        passwords.update({u: secrets.token_urlsafe(12) for u in missing})
        s.passwords_path.write_text(json.dumps(passwords) + "\n", encoding="utf-8")
        s.passwords_path.chmod(0o600)
    return s.config_path


def user_password(home: Path, user: str = ADMIN_USER) -> str:
    """A user's password (written once by ``write_config``)."""
    path = Path(home) / PASSWORDS_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))[user]
    except (OSError, ValueError, KeyError) as exc:
        from gpupoc.exceptions import ConfigError

        raise ConfigError(str(path), [f"{user}: no password found ({exc}); run `gpupoc airflow up` first"
                                      + ("" if user == ADMIN_USER else " with the plan that names this reviewer")])


def admin_password(home: Path) -> str:
    """The admin user's password (written once by ``write_config``)."""
    return user_password(home, ADMIN_USER)


def process_env(s: RuntimeSettings) -> dict[str, str]:
    """Environment of every Airflow process: the venv's bin first on PATH, AIRFLOW_HOME, extra variables."""
    env = dict(os.environ)
    env.update(s.extra_env)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env["AIRFLOW_HOME"] = str(s.home.resolve())
    env.setdefault("PYTHONUNBUFFERED", "1")
    # every task runs in a fresh process: without cached bytecode each one compiles the package's modules the
    # scheduler did not preload (a 10,000-pod run ended some 10 s later; docs/scale.md)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if s.preload:  # the scheduler loads the task modules once, before it forks workers (preload/sitecustomize.py)
        env["PYTHONPATH"] = os.pathsep.join([str(PRELOAD_DIR), *filter(None, [env.get("PYTHONPATH")])])
    # Options set in the environment override airflow.cfg: drop any inherited ones so the file rules.
    for key in [k for k in env if k.startswith("AIRFLOW__")]:
        if key not in s.extra_env:
            del env[key]
    return env


def plan_users(plan_path: str | Path) -> tuple[str, ...]:
    """The Airflow users the plan binds its reviewers to (``report.reviewers[].airflow_user``), once each.

    Reads only that section, so Airflow starts before the cluster the plan points at exists."""
    import yaml
    from pydantic import TypeAdapter, ValidationError

    from gpupoc.common.validation import error_lines
    from gpupoc.exceptions import ConfigError
    from gpupoc.plan.settings import Reviewer

    path = Path(plan_path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        raw = ((data.get("report") or {}).get("reviewers") or []) if isinstance(data, dict) else []
        reviewers = TypeAdapter(list[Reviewer]).validate_python(raw)
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(str(path), [f"(file): cannot read the plan ({exc}); pass an existing plan"]) from None
    except ValidationError as exc:
        raise ConfigError(str(path), [f"report.reviewers{line}" if line.startswith("[") else f"report.reviewers.{line}"
                                      for line in error_lines(exc)]) from None
    return tuple(dict.fromkeys(r.airflow_user for r in reviewers if r.airflow_user and r.airflow_user != ADMIN_USER))
