"""Configuration of the local Airflow deployment, written by code into ``$AIRFLOW_HOME/airflow.cfg``.

SQLite metadata database, LocalExecutor, the repository's ``dags/`` and ``plugins/`` folders, the simple
auth manager with one admin user whose password is generated once and kept in the home directory.
"""

from __future__ import annotations

import configparser
import json
import os
import secrets
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_HOME = REPO_ROOT / ".airflow"
ADMIN_USER = "admin"
PASSWORDS_FILE = "simple_auth_manager_passwords.json.generated"
STATE_FILE = "gpupoc-runtime.json"
PRELOAD_DIR = Path(__file__).resolve().parent / "preload"  # holds the scheduler's sitecustomize.py
# Pools the pipeline's DAGs use: name -> (slots, description). See gpupoc.dag_factory.cluster_pool().
POOLS = {"gpupoc_cluster": (1, "one test class at a time holds the cluster's GPUs (gate release to wave end)")}


@dataclass(frozen=True)
class RuntimeSettings:
    """Where Airflow lives and how hard it may work on this machine.

    ``max_active_tasks`` stays at most 16: above that SQLite answers "database is locked" under a wave.
    Deferred tasks free their executor slot, so ``parallelism`` bounds only tasks actually running.
    """

    home: Path = DEFAULT_HOME
    port: int = 8080
    repo: Path = REPO_ROOT
    parallelism: int = 12
    max_active_tasks: int = 16
    max_active_runs: int = 4
    parsing_processes: int = 1
    paused_at_creation: bool = False
    preload: bool = True  # the scheduler preloads the task modules before forking (see preload/sitecustomize.py)
    extra_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 1 <= self.max_active_tasks <= 16:
            raise ValueError(f"max_active_tasks: expected 1..16 on SQLite, got {self.max_active_tasks}; "
                             "above 16 the scheduler dies with 'database is locked'")
        if self.parallelism < 1:
            raise ValueError(f"parallelism: expected a positive integer, got {self.parallelism}")

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
            "executor": "LocalExecutor",
            "load_examples": "False",
            "dags_are_paused_at_creation": str(s.paused_at_creation),
            "parallelism": str(s.parallelism),
            "max_active_tasks_per_dag": str(s.max_active_tasks),
            "max_active_runs_per_dag": str(s.max_active_runs),
            "auth_manager": "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager",
            "simple_auth_manager_users": f"{ADMIN_USER}:admin",
            "simple_auth_manager_passwords_file": str(home / PASSWORDS_FILE),
            "execution_api_server_url": f"{s.url}/execution/",
            "fernet_key": _secret(old, "core", "fernet_key", _fernet_key),
            "dagbag_import_timeout": "60",
        },
        "database": {"sql_alchemy_conn": f"sqlite:///{home / 'airflow.db'}"},
        "api": {
            "host": "127.0.0.1",
            "port": str(s.port),
            "base_url": s.url,
            "workers": "1",
            "expose_config": "True",
            "secret_key": _secret(old, "api", "secret_key", lambda: secrets.token_urlsafe(32)),
        },
        "api_auth": {"jwt_secret": _secret(old, "api_auth", "jwt_secret", lambda: secrets.token_urlsafe(32))},
        "scheduler": {"scheduler_idle_sleep_time": "0.5", "task_queued_timeout": "900",
                      # tasks orphaned by a scheduler restart are adopted or failed within 20 s, not ~300 s
                      "orphaned_tasks_check_interval": "20"},
        "dag_processor": {
            "refresh_interval": "10",
            "min_file_process_interval": "300",
            "parsing_processes": str(s.parsing_processes),
            "stale_dag_threshold": "120",
        },
        "triggerer": {"capacity": "1000"},
        "logging": {"base_log_folder": str(home / "logs"), "colored_console_log": "False"},
    }


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
    if not s.passwords_path.exists():
        s.passwords_path.write_text(json.dumps({ADMIN_USER: secrets.token_urlsafe(12)}) + "\n", encoding="utf-8")
        s.passwords_path.chmod(0o600)
    return s.config_path


def admin_password(home: Path) -> str:
    """The admin user's password (written once by ``write_config``)."""
    path = Path(home) / PASSWORDS_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))[ADMIN_USER]
    except (OSError, ValueError, KeyError) as exc:
        from gpupoc.exceptions import ConfigError

        raise ConfigError(str(path), [f"{ADMIN_USER}: no password found ({exc}); run `gpupoc airflow up` first"])


def process_env(s: RuntimeSettings) -> dict[str, str]:
    """Environment of every Airflow process: the venv's bin first on PATH, AIRFLOW_HOME, extra variables."""
    env = dict(os.environ)
    env.update(s.extra_env)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env["AIRFLOW_HOME"] = str(s.home.resolve())
    env.setdefault("PYTHONUNBUFFERED", "1")
    if s.preload:  # the scheduler loads the task modules once, before it forks workers (preload/sitecustomize.py)
        env["PYTHONPATH"] = os.pathsep.join([str(PRELOAD_DIR), *filter(None, [env.get("PYTHONPATH")])])
    # Options set in the environment override airflow.cfg: drop any inherited ones so the file rules.
    for key in [k for k in env if k.startswith("AIRFLOW__")]:
        if key not in s.extra_env:
            del env[key]
    return env
