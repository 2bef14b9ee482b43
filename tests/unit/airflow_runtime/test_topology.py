"""The processes of each topology, named as docker-compose.yaml's services, and the order they stop in."""

from __future__ import annotations

from gpupoc.airflow_runtime.settings import Executor, RuntimeSettings
from gpupoc.airflow_runtime.topology import Role, components, health_roles, role_of, stop_rank

CELERY = RuntimeSettings(executor=Executor.CELERY, database_url="postgresql+psycopg2://a:b@127.0.0.1:5432/airflow",
                         broker_url="redis://127.0.0.1:6379/0", schedulers=2, triggerers=2, celery_workers=2,
                         worker_concurrency=3)


def test_the_local_executor_runs_one_of_each_airflow_3_component():
    got = {name: c.args for name, c in components(RuntimeSettings()).items()}
    assert got == {"api-server": ("api-server",), "scheduler": ("scheduler",), "triggerer": ("triggerer",),
                   "dag-processor": ("dag-processor",)}


def test_the_celery_topology_runs_scheduler_ha_two_triggerers_and_named_workers():
    comps = components(CELERY)
    assert list(comps)[0] == "api-server", "every other process talks to the api-server: it starts first"
    by_role: dict[Role, list[str]] = {}
    for c in comps.values():
        by_role.setdefault(c.role, []).append(c.name)
    assert by_role[Role.SCHEDULER] == ["scheduler-1", "scheduler-2"]
    assert by_role[Role.TRIGGERER] == ["triggerer-1", "triggerer-2"]
    assert by_role[Role.CELERY_WORKER] == ["worker-1", "worker-2"]
    assert by_role[Role.DAG_PROCESSOR] == ["dag-processor"] and by_role[Role.API_SERVER] == ["api-server"]
    w1 = comps["worker-1"]
    assert w1.args[:2] == ("celery", "worker") and w1.celery_node == "worker-1@"
    assert w1.args[w1.args.index("--celery-hostname") + 1] == "worker-1@%h"
    assert w1.args[w1.args.index("--concurrency") + 1] == "3"
    # instances on one host share the log files and a log server port: none serves its own
    for name in ("scheduler-1", "scheduler-2", "triggerer-1", "triggerer-2", "worker-1", "worker-2"):
        assert "--skip-serve-logs" in comps[name].args, name
    assert comps["scheduler-1"].celery_node is None


def test_schedulers_stop_first_and_the_api_server_last():
    names = sorted(components(CELERY), key=stop_rank)
    assert names[:2] == ["scheduler-1", "scheduler-2"] and names[-1] == "api-server"
    assert names.index("worker-1") < names.index("triggerer-1") < names.index("dag-processor")
    assert role_of("worker-2") is Role.CELERY_WORKER and role_of("dag-processor") is Role.DAG_PROCESSOR
    assert role_of("flower") is None and stop_rank("flower") > stop_rank("api-server")


def test_health_is_awaited_once_per_role_the_api_reports():
    assert health_roles(list(components(CELERY))) == ["scheduler", "triggerer", "dag-processor"]
    assert health_roles(["api-server", "scheduler"]) == ["scheduler"]
