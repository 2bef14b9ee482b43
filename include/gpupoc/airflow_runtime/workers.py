"""Celery workers of a CeleryExecutor deployment, seen through the broker: who answers, who runs what.

Uses Celery's remote control (``[celery] worker_enable_remote_control``, on by default) with the deployment's
broker URL; Celery comes with the ``apache-airflow-providers-celery`` package.
"""

from __future__ import annotations

import time

from gpupoc.exceptions import SourceUnavailable


def _app(broker_url: str):
    from celery import Celery

    return Celery("gpupoc-runtime", broker=broker_url)


def ping(broker_url: str, timeout: float = 1.0) -> list[str]:
    """Node names (``worker-1@host``) of the workers that answered a ping within ``timeout`` seconds."""
    app = _app(broker_url)
    try:
        return sorted(name for reply in app.control.ping(timeout=timeout) or [] for name in reply)
    finally:
        app.close()


def wait_workers(broker_url: str, prefixes: list[str], timeout: float = 120.0) -> list[str]:
    """Until a worker answers for every node name prefix (``worker-1@``); returns the node names."""
    deadline = time.monotonic() + timeout
    nodes: list[str] = []
    while time.monotonic() < deadline:
        nodes = ping(broker_url)
        if all(any(n.startswith(p) for n in nodes) for p in prefixes):
            return nodes
        time.sleep(1.0)
    raise SourceUnavailable(broker_url, f"Celery workers {prefixes} not answering after {timeout:.0f} s "
                                        f"(answered: {nodes})", "see $AIRFLOW_HOME/logs/worker-*.out")


def active(broker_url: str, timeout: float = 1.0) -> dict[str, list[dict]]:
    """Node name -> the tasks it runs now (Celery's ``inspect active``: id, name, args per task)."""
    app = _app(broker_url)
    try:
        return app.control.inspect(timeout=timeout).active() or {}
    finally:
        app.close()
