"""The local Airflow's configuration, written by code: folders, executor, limits, secrets kept across rewrites."""

from __future__ import annotations

import configparser
import json

import pytest

from gpupoc.airflow_runtime.settings import Executor, RuntimeSettings, admin_password, process_env, write_config
from gpupoc.exceptions import ConfigError


def read(path) -> configparser.ConfigParser:
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(path)
    return cfg


def test_config_points_at_the_repository_and_runs_local_executor_on_sqlite(tmp_path):
    s = RuntimeSettings(home=tmp_path / "af", port=18080, repo=tmp_path / "repo")
    cfg = read(write_config(s))
    assert cfg["core"]["dags_folder"] == str(tmp_path / "repo" / "dags")
    assert cfg["core"]["plugins_folder"] == str(tmp_path / "repo" / "plugins")
    assert cfg["core"]["executor"] == "LocalExecutor" and cfg["core"]["load_examples"] == "False"
    assert cfg["database"]["sql_alchemy_conn"] == f"sqlite:///{(tmp_path / 'af').resolve() / 'airflow.db'}"
    assert cfg["core"]["execution_api_server_url"] == "http://127.0.0.1:18080/execution/"
    assert cfg["api"]["host"] == "127.0.0.1" and cfg["api"]["port"] == "18080"
    assert int(cfg["core"]["max_active_tasks_per_dag"]) <= 16
    assert cfg["core"]["dags_are_paused_at_creation"] == "False"


def test_secrets_and_the_admin_password_survive_a_rewrite(tmp_path):
    s = RuntimeSettings(home=tmp_path)
    first = read(write_config(s))
    pw = admin_password(tmp_path)
    second = read(write_config(RuntimeSettings(home=tmp_path, port=9999)))
    for section, key in (("core", "fernet_key"), ("api", "secret_key"), ("api_auth", "jwt_secret")):
        assert first[section][key] and first[section][key] == second[section][key]
    assert admin_password(tmp_path) == pw and len(pw) >= 12
    assert (tmp_path / "simple_auth_manager_passwords.json.generated").stat().st_mode & 0o077 == 0
    assert json.loads((tmp_path / "simple_auth_manager_passwords.json.generated").read_text()) == {"admin": pw}


def test_more_than_16_active_tasks_is_refused_because_sqlite_locks():
    with pytest.raises(ValueError, match="database is locked"):
        RuntimeSettings(max_active_tasks=32)


PG = "postgresql+psycopg2://airflow:pw@127.0.0.1:5432/airflow"


def test_celery_executor_config_names_the_broker_and_keeps_task_states_in_the_metadata_database(tmp_path):
    s = RuntimeSettings(home=tmp_path, executor=Executor.CELERY, database_url=PG, broker_url="redis://127.0.0.1:6390/0",
                        worker_concurrency=3, max_active_tasks=64, schedulers=2)
    cfg = read(write_config(s))
    assert cfg["core"]["executor"] == "CeleryExecutor"
    assert cfg["database"]["sql_alchemy_conn"] == PG
    assert cfg["celery"]["broker_url"] == "redis://127.0.0.1:6390/0"
    assert cfg["celery"]["result_backend"] == "db+" + PG
    assert cfg["celery"]["worker_concurrency"] == "3"
    assert cfg["core"]["max_active_tasks_per_dag"] == "64", "PostgreSQL does not lock like SQLite"


def test_local_executor_config_has_no_celery_section(tmp_path):
    assert not read(write_config(RuntimeSettings(home=tmp_path))).has_section("celery")


@pytest.mark.parametrize("kwargs, field", [
    ({"executor": Executor.CELERY, "broker_url": "redis://127.0.0.1:6379/0"}, "database_url"),
    ({"executor": Executor.CELERY, "database_url": PG}, "broker_url"),
    ({"schedulers": 2}, "schedulers"),
    ({"celery_workers": 0, "executor": Executor.CELERY, "database_url": PG, "broker_url": "redis://x"},
     "celery_workers"),
])
def test_a_topology_the_database_or_broker_cannot_carry_is_refused_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=f"^{field}: "):
        RuntimeSettings(**kwargs)


def test_processes_get_the_venv_first_on_path_and_no_inherited_airflow_overrides(tmp_path, monkeypatch):
    import sys
    from pathlib import Path

    monkeypatch.setenv("AIRFLOW__CORE__EXECUTOR", "CeleryExecutor")
    env = process_env(RuntimeSettings(home=tmp_path, extra_env={"GPUPOC_PLAN": "/p.yaml"}))
    assert env["PATH"].split(":")[0] == str(Path(sys.executable).parent)
    assert env["AIRFLOW_HOME"] == str(tmp_path.resolve()) and env["GPUPOC_PLAN"] == "/p.yaml"
    assert "AIRFLOW__CORE__EXECUTOR" not in env


def test_processes_keep_compiled_bytecode_even_where_the_shell_turned_it_off(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert "PYTHONDONTWRITEBYTECODE" not in process_env(RuntimeSettings(home=tmp_path))


def test_a_missing_password_file_says_to_start_airflow_first(tmp_path):
    with pytest.raises(ConfigError, match="gpupoc airflow up"):
        admin_password(tmp_path)


def test_only_the_processes_that_fork_tasks_or_parsers_preload_what_their_children_need(tmp_path):
    import importlib.util

    from gpupoc.airflow_runtime.settings import PRELOAD_DIR, RuntimeSettings, process_env

    spec = importlib.util.spec_from_file_location("preload_site", PRELOAD_DIR / "sitecustomize.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # in pytest's process: not the scheduler, so nothing is imported
    assert mod.preloaded_modules([b"/venv/bin/airflow", b"scheduler", b""])
    assert mod.preloaded_modules([b"/venv/bin/python3", b"/venv/bin/airflow", b"scheduler"])
    assert mod.preloaded_modules([b"/venv/bin/airflow", b"celery", b"worker", b"--concurrency", b"4"])
    assert not mod.preloaded_modules([b"/venv/bin/airflow", b"celery", b"flower"])
    assert not mod.preloaded_modules([b"/venv/bin/airflow", b"triggerer"])
    parsing = mod.preloaded_modules([b"/venv/bin/airflow", b"dag-processor", b""])
    assert "gpupoc.dags.factory" in parsing and "great_expectations" not in parsing  # it parses DAG files only
    assert "great_expectations" in mod.preloaded_modules([b"/venv/bin/airflow", b"scheduler"])
    assert not mod.preloaded_modules([b"/venv/bin/airflow", b"api-server", b"--port", b"8080"])
    assert not mod.preloaded_modules([b"/usr/bin/python3", b"-m", b"pytest"])
    env = process_env(RuntimeSettings(home=tmp_path, extra_env={"PYTHONPATH": "/elsewhere"}))
    assert env["PYTHONPATH"].split(":") == [str(PRELOAD_DIR), "/elsewhere"]
    assert "PYTHONPATH" not in process_env(RuntimeSettings(home=tmp_path, preload=False)) or \
        str(PRELOAD_DIR) not in process_env(RuntimeSettings(home=tmp_path, preload=False))["PYTHONPATH"]


def test_sqlite_waits_a_minute_for_its_lock_and_postgres_keeps_its_driver_defaults(tmp_path):
    import importlib

    sqlite_cfg = read(write_config(RuntimeSettings(home=tmp_path / "a")))["database"]
    target = sqlite_cfg["sql_alchemy_connect_args"]
    module, _, name = target.rpartition(".")
    assert getattr(importlib.import_module(module), name)["timeout"] >= 30
    assert sqlite_cfg["sql_alchemy_connect_args_async"] == target
    pg = RuntimeSettings(home=tmp_path / "b", database_url="postgresql+psycopg2://u:p@127.0.0.1:5432/af")
    assert "sql_alchemy_connect_args" not in read(write_config(pg))["database"]


def test_a_database_given_in_the_environment_counts_as_the_metadata_database(tmp_path):
    pg = "postgresql+psycopg2://u:p@127.0.0.1:5432/af"
    s = RuntimeSettings(home=tmp_path, max_active_tasks=32, extra_env={"AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": pg})
    assert not s.on_sqlite and s.metadata_url == pg
    assert "sql_alchemy_connect_args" not in read(write_config(s))["database"], "psycopg2 refuses 'timeout'"


def test_the_plans_reviewers_get_users_of_their_own_with_passwords_kept_across_rewrites(tmp_path):
    from gpupoc.airflow_runtime.settings import user_password

    s = RuntimeSettings(home=tmp_path, users=("zhao", "li"))
    cfg = read(write_config(s))
    assert cfg["core"]["simple_auth_manager_users"] == "admin:admin,zhao:user,li:user"
    first = {u: user_password(tmp_path, u) for u in ("admin", "zhao", "li")}
    assert len(set(first.values())) == 3 and all(len(p) >= 12 for p in first.values())
    write_config(RuntimeSettings(home=tmp_path, users=("zhao", "li", "wang")))
    assert {u: user_password(tmp_path, u) for u in ("admin", "zhao", "li")} == first
    assert user_password(tmp_path, "wang") not in first.values()
    with pytest.raises(ConfigError, match="sun: no password found .* with the plan that names this reviewer"):
        user_password(tmp_path, "sun")


@pytest.mark.parametrize("bad", ["admin", "zhao min", "zhao:op", ""])
def test_a_user_name_the_auth_manager_cannot_hold_is_refused(bad):
    with pytest.raises(ValueError, match="users: expected user names"):
        RuntimeSettings(users=(bad,))


def test_the_reviewer_users_come_from_the_plans_reviewers_alone(tmp_path):
    from gpupoc.airflow_runtime.settings import plan_users

    plan = tmp_path / "plan.yaml"
    plan.write_text("platform: {kubeconfig: nowhere}\nreport:\n  reviewers:\n"
                    "    - {name: Zhao Min, role: security, airflow_user: zhao}\n"
                    "    - {name: Zhao Min, role: management, airflow_user: zhao}\n"
                    "    - {name: Li Lei, role: platform}\n")
    assert plan_users(plan) == ("zhao",), "once each; a reviewer without a user gets none"
    plan.write_text("report:\n  reviewers:\n    - {name: Zhao Min, role: security, airflow_user: 'zhao min'}\n")
    with pytest.raises(ConfigError, match=r"report\.reviewers\[0\]\.airflow_user: expected the Airflow user name"):
        plan_users(plan)
