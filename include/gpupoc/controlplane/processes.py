"""The components as local processes: started in their own session with their output in ``logs/<name>.log`` and
their process id in ``run/<name>.pid``; found again by that id (checked against /proc, so a reused id never
passes for ours); stopped by id, SIGTERM then SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from gpupoc.common.processes import pid_alive, process_running
from gpupoc.controlplane.layout import Layout

_CHILDREN: dict[int, subprocess.Popen] = {}  # started by this process: reaped on stop


def recorded_pid(layout: Layout, name: str) -> int | None:
    try:
        return int(layout.pid_file(name).read_text().strip())
    except (OSError, ValueError):
        return None


def running_pid(layout: Layout, name: str, binary: Path) -> int | None:
    """The component's process id when it runs the expected binary, else None."""
    pid = recorded_pid(layout, name)
    return pid if pid and pid_alive(pid, str(binary)) else None


def start(layout: Layout, name: str, argv: list[str], env: dict[str, str] | None = None) -> int:
    """Start ``argv`` detached (its own session; ``env``, else this process's environment), output appended to its
    log; returns its pid."""
    log = layout.log_file(name)
    with open(log, "ab") as out:
        out.write(f"==== {name} starting at {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n".encode())
        out.flush()
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                             cwd=layout.root, env=env, start_new_session=True, close_fds=True)
    _CHILDREN[p.pid] = p
    layout.pid_file(name).write_text(f"{p.pid}\n")
    return p.pid


def exited(pid: int) -> bool:
    """True once the process is gone (reaping it when this process started it)."""
    child = _CHILDREN.get(pid)
    if child is not None and child.poll() is not None:
        return True
    return not process_running(pid)


def stop(layout: Layout, name: str, binary: Path, grace_seconds: float = 10.0) -> bool:
    """Stop the component if it runs; True when it was running. Its pid file goes either way."""
    pid = running_pid(layout, name, binary)
    if pid is not None:
        _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_seconds
        while not exited(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not exited(pid):
            _signal(pid, signal.SIGKILL)
            while not exited(pid):
                time.sleep(0.05)
        child = _CHILDREN.pop(pid, None)
        if child is not None:
            child.wait()
    layout.pid_file(name).unlink(missing_ok=True)
    return pid is not None


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def log_tail(layout: Layout, name: str, lines: int = 15) -> str:
    try:
        return "\n".join(layout.log_file(name).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
