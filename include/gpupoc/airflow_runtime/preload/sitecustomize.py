"""Put on the Airflow processes' PYTHONPATH by ``gpupoc.airflow_runtime``: the processes that fork task
processes (the scheduler of the LocalExecutor, a Celery worker) import what every task needs (the Task SDK,
the KubernetesPodOperator, the DAG factory, the plan, and Great Expectations for ``validate``) before they fork, so a task process starts with them
loaded instead of paying the imports itself.
Any other process (api-server, triggerer, dag-processor, tasks, tools) returns at once.
"""


def should_preload(argv: list) -> bool:
    """True for ``.../airflow scheduler ...`` and ``.../airflow celery worker ...`` (also run by ``python``)."""
    names = [a.decode(errors="replace") if isinstance(a, bytes) else str(a) for a in argv[:4]]
    for i, name in enumerate(names[:2]):
        if name.endswith("airflow"):
            command = names[i + 1:i + 3]
            return command[:1] == ["scheduler"] or command == ["celery", "worker"]
    return False


def _preload() -> None:
    try:
        with open("/proc/self/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return
    if not should_preload(argv):
        return
    import os
    import sys
    import time

    t0 = time.perf_counter()
    try:
        import airflow.providers.cncf.kubernetes.operators.pod  # noqa: F401
        import airflow.sdk  # noqa: F401
        import great_expectations  # noqa: F401  - validate's import: 2 s of CPU, 4-5 s on a busy machine, per run

        import gpupoc.dags.factory  # noqa: F401
        import gpupoc.dags.operator  # noqa: F401
        import gpupoc.steps.collect  # noqa: F401
        import gpupoc.steps.finish  # noqa: F401
        import gpupoc.steps.setup  # noqa: F401
        import gpupoc.steps.wave  # noqa: F401
        from gpupoc.plan import load_plan_file

        if os.environ.get("GPUPOC_PLAN"):
            load_plan_file(os.environ["GPUPOC_PLAN"])  # what parsing a DAG file reads
        print(f"gpupoc preload: task modules loaded in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    except Exception as exc:  # noqa: BLE001 - never keep the scheduler from starting
        print(f"gpupoc preload skipped: {exc}", file=sys.stderr)


_preload()
