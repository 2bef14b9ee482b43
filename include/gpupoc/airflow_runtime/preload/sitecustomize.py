"""Put on the Airflow processes' PYTHONPATH by ``gpupoc.airflow_runtime``: the processes that fork a child per
task or per DAG file import what those children need before they fork, so a child starts with it loaded
instead of paying the imports itself:

- the scheduler of the LocalExecutor and a Celery worker fork task processes: the Task SDK, the
  KubernetesPodOperator, the DAG factory, the task steps, the plan, and Great Expectations for ``validate``;
- the DAG processor forks one parser per DAG file (six of them, again every ``min_file_process_interval``):
  the Task SDK, the KubernetesPodOperator, the DAG factory and the plan.

What they loaded is then frozen out of the garbage collector's walks (``gpupoc.common.gc_pace``), so the
children's collections never touch it. Any other process (api-server, triggerer, tasks, tools) returns at once.
"""

# what each forking process loads, by its role
_DAG_PARSING = ("airflow.sdk", "airflow.providers.cncf.kubernetes.operators.pod", "gpupoc.dags.factory",
                "gpupoc.dags.operator")
_TASKS = (*_DAG_PARSING, "gpupoc.steps.collect", "gpupoc.steps.finish", "gpupoc.steps.setup", "gpupoc.steps.wave",
          "great_expectations")  # validate's import: 2 s of CPU, 4-5 s on a busy machine, per run
_ROLES = {"scheduler": _TASKS, "celery worker": _TASKS, "dag-processor": _DAG_PARSING}


def preloaded_modules(argv: list) -> tuple[str, ...]:
    """The modules this process loads before it forks: none unless it is ``.../airflow scheduler ...``,
    ``.../airflow celery worker ...`` or ``.../airflow dag-processor ...`` (also run by ``python``)."""
    names = [a.decode(errors="replace") if isinstance(a, bytes) else str(a) for a in argv[:4]]
    for i, name in enumerate(names[:2]):
        if name.endswith("airflow"):
            command = names[i + 1:i + 3]
            role = " ".join(command) if command[:1] == ["celery"] else "".join(command[:1])
            return _ROLES.get(role, ())
    return ()


def _preload() -> None:
    try:
        with open("/proc/self/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return
    modules = preloaded_modules(argv)
    if not modules:
        return
    import importlib
    import os
    import sys
    import time

    t0 = time.perf_counter()
    try:
        for module in modules:
            importlib.import_module(module)
        from gpupoc.plan import load_plan_file

        if os.environ.get("GPUPOC_PLAN"):
            load_plan_file(os.environ["GPUPOC_PLAN"])  # what parsing a DAG file reads
        from gpupoc.common.gc_pace import freeze_before_fork

        frozen = freeze_before_fork()  # the children never walk what was loaded for them
        print(f"gpupoc preload: {len(modules)} modules loaded in {time.perf_counter() - t0:.1f} s, {frozen} objects "
              "frozen", file=sys.stderr)
    except Exception as exc:  # noqa: BLE001 - never keep the scheduler or the DAG processor from starting
        print(f"gpupoc preload skipped: {exc}", file=sys.stderr)


_preload()
