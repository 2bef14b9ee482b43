"""``gpupoc airflow up|down|status|trigger DAG [--conf JSON]|wait RUN``: the local Airflow deployment."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from gpupoc.exceptions import ConfigError


def _home(args: argparse.Namespace) -> Path:
    from gpupoc.airflow_runtime.settings import DEFAULT_HOME

    return Path(args.home or os.environ.get("AIRFLOW_HOME") or DEFAULT_HOME)


def _up(args: argparse.Namespace) -> int:
    from gpupoc.airflow_runtime.processes import memory, up
    from gpupoc.airflow_runtime.settings import (Executor, RuntimeSettings, free_port,
                                                 plan_users)
    from gpupoc.pipeline.common import default_plan_path

    extra = {}
    if args.plan:
        extra["GPUPOC_PLAN"] = str(Path(args.plan).resolve())
    users = plan_users(args.plan or default_plan_path())  # the reviewers sign off as themselves
    try:
        settings = RuntimeSettings(home=_home(args), port=args.port or free_port(), parallelism=args.parallelism,
                                   max_active_tasks=args.max_active_tasks, paused_at_creation=args.paused,
                                   extra_env=extra, executor=Executor(args.executor),
                                   database_url=args.database_url or "", broker_url=args.broker_url or "",
                                   schedulers=args.schedulers, triggerers=args.triggerers,
                                   celery_workers=args.celery_workers, users=users)
    except ValueError as exc:
        field, _, message = str(exc).partition(": ")
        raise ConfigError("gpupoc airflow up", [f"--{field.replace('_', '-')}: {message}"]) from None
    state = up(settings, wait_healthy=not args.no_wait)
    mem = memory(state)
    print(json.dumps({
        "url": state.url, "user": "admin", "home": str(settings.home),
        "reviewer_users": list(users), "passwords_file": str(settings.passwords_path),
        "executor": state.executor,
        "pids": state.pids, "migrate_seconds": round(state.migrate_seconds, 1),
        "ready_seconds": round(state.ready_seconds, 1), "healthy_seconds": round(state.healthy_seconds, 1),
        "rss_mib_total": round(sum(m["rss_mib"] for m in mem.values()), 1),
        "pss_mib_total": round(sum(m["pss_mib"] for m in mem.values()), 1),
    }, indent=2))
    return 0


def _down(args: argparse.Namespace) -> int:
    from gpupoc.airflow_runtime.processes import down

    result = down(_home(args))
    print(json.dumps(result or {"status": "nothing recorded as running"}, indent=2))
    return 0


def _status(args: argparse.Namespace) -> int:
    from gpupoc.airflow_runtime.processes import status

    info = status(_home(args))
    print(json.dumps(info, indent=2, default=str))
    return 0 if info.get("running") else 1


def _client(args: argparse.Namespace):
    from gpupoc.airflow_runtime.client import AirflowClient

    return AirflowClient.for_home(_home(args))


def _trigger(args: argparse.Namespace) -> int:
    try:
        conf = json.loads(args.conf) if args.conf else {}
    except ValueError as exc:
        raise ConfigError("--conf", [f"(json): not valid JSON: {exc}; pass e.g. '{{\"plan\": \"plans/x.yaml\"}}'"])
    client = _client(args)
    client.wait_dag(args.dag)
    client.unpause(args.dag)
    run = client.trigger(args.dag, conf)
    print(f"{args.dag}/{run['dag_run_id']}")
    if args.wait:
        return _finish(client, args.dag, run["dag_run_id"], args.timeout)
    return 0


def _finish(client, dag_id: str, run_id: str, timeout: float) -> int:
    def progress(run: dict, counts) -> None:
        summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        print(f"{dag_id}/{run_id}: {run.get('state')} ({summary})", file=sys.stderr, flush=True)

    run = client.wait_run(dag_id, run_id, timeout=timeout, on_progress=progress)
    print(json.dumps({"dag_id": dag_id, "run_id": run_id, "state": run.get("state")}))
    return 0 if run.get("state") == "success" else 1


def _wait(args: argparse.Namespace) -> int:
    dag, _, run_id = args.run.partition("/")
    if args.dag:
        dag, run_id = args.dag, args.run
    if not dag:
        raise ConfigError("RUN", [f"RUN: expected DAG/RUN_ID as printed by `gpupoc airflow trigger`, or a DAG id "
                                  f"(its latest run), got {args.run!r}"])
    client = _client(args)
    if not run_id:  # a DAG id alone: its newest run, e.g. the scheduled run the plan window started
        latest = client.latest_run(dag, timeout=min(args.timeout, 180.0))
        if latest is None:
            raise ConfigError("RUN", [f"RUN: DAG {dag!r} has no run yet; trigger one with `gpupoc airflow trigger {dag}`"])
        run_id = latest["dag_run_id"]
    return _finish(client, dag, run_id, args.timeout)


def register(subparsers) -> None:
    """Add the ``airflow`` area to the top-level ``gpupoc`` parser."""
    p = subparsers.add_parser("airflow", help="run a local Airflow (api-server, scheduler, triggerer, dag-processor)")
    p.add_argument("--home", help="AIRFLOW_HOME (default: $AIRFLOW_HOME or <repo>/.airflow)")
    sub = p.add_subparsers(dest="airflow_cmd", required=True)

    s = sub.add_parser("up", help="write the config, migrate the database, start the components")
    s.add_argument("--port", type=int, default=8080, help="api-server port on 127.0.0.1 (0: any free port)")
    s.add_argument("--parallelism", type=int, default=12, help="tasks running at once (deferred ones do not count)")
    s.add_argument("--max-active-tasks", type=int, default=16, help="per DAG, at most 16 on SQLite")
    s.add_argument("--plan", help="POC plan the DAGs read (GPUPOC_PLAN); default plans/default.yaml")
    s.add_argument("--paused", action="store_true", help="new DAGs start paused (trigger unpauses one)")
    s.add_argument("--no-wait", action="store_true", help="return once the API answers, not when all are healthy")
    s.add_argument("--executor", choices=["LocalExecutor", "CeleryExecutor"], default="LocalExecutor",
                   help="CeleryExecutor needs --database-url and --broker-url (docs/deploy.md)")
    s.add_argument("--database-url", help="metadata database (SQLAlchemy URL, e.g. postgresql+psycopg2://...); "
                                          "default: SQLite under --home")
    s.add_argument("--broker-url", help="Celery broker, e.g. redis://127.0.0.1:6379/0")
    s.add_argument("--schedulers", type=int, default=1, help="schedulers (more than one: PostgreSQL only)")
    s.add_argument("--triggerers", type=int, default=1)
    s.add_argument("--celery-workers", type=int, default=2, help="Celery workers (CeleryExecutor)")
    s.set_defaults(func=_up)

    s = sub.add_parser("down", help="stop every process `up` started, by process id")
    s.set_defaults(func=_down)

    s = sub.add_parser("status", help="components, pids, memory and health; exit 1 when not running")
    s.set_defaults(func=_status)

    s = sub.add_parser("trigger", help="unpause DAG and start a run now; prints DAG/RUN_ID (unpausing also starts "
                                       "the run the plan window has due, if any)")
    s.add_argument("dag")
    s.add_argument("--conf", help="run configuration as JSON (the trigger form's parameters)")
    s.add_argument("--wait", action="store_true", help="wait until the run ends; exit 1 unless it succeeded")
    s.add_argument("--timeout", type=float, default=1800.0)
    s.set_defaults(func=_trigger)

    s = sub.add_parser("wait", help="wait until a run ends; exit 1 unless it succeeded")
    s.add_argument("run", help="DAG/RUN_ID as printed by trigger, RUN_ID with --dag, or DAG alone: its latest run")
    s.add_argument("--dag")
    s.add_argument("--timeout", type=float, default=1800.0)
    s.set_defaults(func=_wait)
