"""The exporter (``exporter.py``) as a process of a control plane's root: started detached with its output in
``logs/exporter.log``, its pid in ``run/exporter.pid`` and ``{pid, url}`` in ``run/exporter.json``; stopped by
that pid (SIGTERM, then SIGKILL), as the control plane's components are."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import gpupoc
from gpupoc.common.processes import pid_alive
from gpupoc.controlplane import processes
from gpupoc.controlplane.layout import Layout
from gpupoc.exceptions import GpupocError

NAME = "exporter"
MODULE = "gpupoc.controlplane.exporter"  # also the mark a live pid's command line must carry


@dataclass(frozen=True)
class ExporterProcess:
    """A running exporter process: scrape ``url`` + ``/metrics`` and ``/metrics/kube-state``."""

    pid: int
    url: str
    log: Path
    state_file: Path


def state_file(layout: Layout) -> Path:
    return layout.run / f"{NAME}.json"


def running_exporter(root: Path) -> ExporterProcess | None:
    """The exporter running for ``root``, else None."""
    layout = Layout(Path(root).resolve())
    try:
        state = json.loads(state_file(layout).read_text())
    except (OSError, ValueError):
        return None
    pid = state.get("pid")
    if not pid_alive(pid, MODULE) or processes.recorded_pid(layout, NAME) != pid:
        return None
    return ExporterProcess(pid, state["url"], layout.log_file(NAME), state_file(layout))


def spawn_exporter(root: Path, kubeconfig: Path | None = None, port: int = 0,
                   timeout: float = 60.0) -> ExporterProcess:
    """Start the exporter for the control plane under ``root`` (its ``admin.kubeconfig`` unless ``kubeconfig``)
    on 127.0.0.1:``port`` (0: a free one), or return the one already running; waits until it serves."""
    layout = Layout(Path(root).resolve())
    found = running_exporter(layout.root)
    if found is not None:
        return found
    layout.run.mkdir(parents=True, exist_ok=True)
    layout.logs.mkdir(parents=True, exist_ok=True)
    state = state_file(layout)
    state.unlink(missing_ok=True)
    config = Path(kubeconfig).resolve() if kubeconfig else layout.kubeconfig
    argv = [sys.executable, "-m", MODULE, "--kubeconfig", str(config), "--port", str(port), "--state", str(state)]
    package_root = str(Path(gpupoc.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH"))
                                                         if p)}
    log = layout.log_file(NAME)
    pid = processes.start(layout, NAME, argv, env=env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = running_exporter(layout.root)
        if found is not None:
            return found
        if processes.exited(pid):
            stop_exporter(layout.root)
            raise GpupocError(f"the exporter exited during start-up; see {log}:\n"
                              f"{processes.log_tail(layout, NAME)}")
        time.sleep(0.1)
    stop_exporter(layout.root)
    raise GpupocError(f"the exporter did not serve within {timeout:.0f} s; see {log}")


def stop_exporter(root: Path) -> bool:
    """Stop the exporter of ``root`` by its pid; True when it was running. Its pid and state files go."""
    layout = Layout(Path(root).resolve())
    stopped = processes.stop(layout, NAME, Path(MODULE))
    state_file(layout).unlink(missing_ok=True)
    return stopped
