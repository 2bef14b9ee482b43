"""Which Airflow processes a deployment runs, as docker-compose.yaml runs them as services.

- LocalExecutor (the default): ``api-server``, ``scheduler`` (it runs the tasks), ``triggerer``,
  ``dag-processor``.
- CeleryExecutor (compose's ``celery`` profile): the api-server and dag-processor, ``RuntimeSettings.schedulers``
  schedulers (Airflow's scheduler HA), ``triggerers`` triggerers and ``celery_workers`` workers
  (``airflow celery worker``, each with its own Celery node name ``worker-N@<host>``).

Several instances of a component on one host share its log files, so they serve no logs of their own
(``--skip-serve-logs``: the api-server reads the local files); in compose each container serves its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from gpupoc.airflow_runtime.settings import Executor, RuntimeSettings
from gpupoc.common.processes import cmdline, process_running

# What the command line of a started component shows: ``airflow ...``, or for a Celery worker the process
# title Celery gives it (``[celeryd: worker-1@host:MainProcess] ...``).
PROCESS_MARKS = ("airflow", "celeryd")


def component_alive(pid: int | None) -> bool:
    """True while ``pid`` runs one of our components (not gone, not a zombie, not a recycled id)."""
    line = cmdline(pid).strip()
    if not line:  # a running process whose title is being rewritten reads empty: still ours
        return process_running(pid)
    return any(mark in line for mark in PROCESS_MARKS)


class Role(str, Enum):
    API_SERVER = "api-server"
    SCHEDULER = "scheduler"
    TRIGGERER = "triggerer"
    DAG_PROCESSOR = "dag-processor"
    CELERY_WORKER = "celery-worker"


# Schedulers stop first so they hand out nothing more; the api-server last so tasks can report their end.
STOP_ORDER = (Role.SCHEDULER, Role.CELERY_WORKER, Role.TRIGGERER, Role.DAG_PROCESSOR, Role.API_SERVER)
# Roles the API's health endpoint reports (``/api/v2/monitor/health``).
HEALTH_ROLES = (Role.SCHEDULER, Role.TRIGGERER, Role.DAG_PROCESSOR)
WORKER_PREFIX = "worker"


@dataclass(frozen=True)
class Component:
    """One process of the deployment: its unique name, its role and the ``airflow`` arguments that start it."""

    name: str
    role: Role
    args: tuple[str, ...]

    @property
    def celery_node(self) -> str | None:
        """The Celery node name prefix (``worker-1@``) of a worker, None for other roles."""
        return f"{self.name}@" if self.role is Role.CELERY_WORKER else None


def _instances(role: Role, count: int, args: tuple[str, ...]) -> list[Component]:
    if count == 1:
        return [Component(role.value, role, args)]
    return [Component(f"{role.value}-{i}", role, (*args, "--skip-serve-logs")) for i in range(1, count + 1)]


def components(s: RuntimeSettings) -> dict[str, Component]:
    """Name -> component, in start order (the api-server first: every other process talks to it)."""
    out = [Component(Role.API_SERVER.value, Role.API_SERVER, ("api-server",)),
           *_instances(Role.SCHEDULER, s.schedulers, ("scheduler",)),
           *_instances(Role.TRIGGERER, s.triggerers, ("triggerer",)),
           Component(Role.DAG_PROCESSOR.value, Role.DAG_PROCESSOR, ("dag-processor",))]
    if s.executor is Executor.CELERY:
        for i in range(1, s.celery_workers + 1):
            name = f"{WORKER_PREFIX}-{i}"
            out.append(Component(name, Role.CELERY_WORKER, (
                "celery", "worker", "--celery-hostname", f"{name}@%h", "--concurrency", str(s.worker_concurrency),
                "--skip-serve-logs")))
    return {c.name: c for c in out}


def role_of(name: str) -> Role | None:
    """The role of a recorded component name (``scheduler-2`` -> scheduler), None when unknown."""
    if name.startswith(f"{WORKER_PREFIX}-"):
        return Role.CELERY_WORKER
    for role in Role:
        if name == role.value or name.startswith(f"{role.value}-"):
            return role
    return None


def stop_rank(name: str) -> int:
    role = role_of(name)
    return STOP_ORDER.index(role) if role is not None else len(STOP_ORDER)


def health_roles(names: list[str]) -> list[str]:
    """The roles among ``names`` that the health endpoint reports, once each."""
    roles = {role_of(n) for n in names}
    return [r.value for r in HEALTH_ROLES if r in roles]
