"""Is a process ours and still running? Read from /proc, so a reused process id never passes for ours."""

from __future__ import annotations

from pathlib import Path


def _stat_fields(pid: int | None) -> list[str]:
    """Fields of ``/proc/<pid>/stat`` after the command name, starting with the state (field 3); [] when the
    process does not exist or cannot be read. The name is cut at its last ')' since it may hold spaces."""
    if not pid or pid <= 0:
        return []
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return []


def _state(pid: int | None) -> str:
    """The process's one-letter state (R, S, D, Z, X...), '' when it does not exist."""
    fields = _stat_fields(pid)
    return fields[0] if fields else ""


def cmdline(pid: int | None) -> str:
    """The process's command line ('' when it does not exist, is a zombie or cannot be read)."""
    if not process_running(pid):
        return ""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def pid_alive(pid: int | None, mark: str) -> bool:
    """True when ``pid`` runs (not a zombie) and its command line contains ``mark``."""
    line = cmdline(pid)
    return bool(line) and mark in line


def start_ticks(pid: int | None) -> int | None:
    """When ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat`` field 22); None when it is gone.
    A pid the kernel gave to a new process has another start time, so this tells a recycled id apart."""
    fields = _stat_fields(pid)
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def process_running(pid: int | None) -> bool:
    """True while ``pid`` exists and is not a zombie, whatever its command line says (a process rewriting
    its title, or mid-exec, reads as an empty command line for a moment)."""
    return _state(pid) not in ("", "Z", "X")


def tree_rss_bytes(pid: int) -> int:
    """Resident memory of the process and all its children (0 once it is gone)."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def _load_prctl():
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a forked child (``preexec_fn``): SIGKILL when its parent dies, so no child outlives it."""
    import signal

    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def descendants(pid: int) -> list:
    """Children of every depth (``psutil`` processes), even those that lead their own session or group (the
    cluster's workload processes, Airflow's task processes); [] when ``pid`` is gone or cannot be read."""
    try:
        import psutil

        return psutil.Process(pid).children(recursive=True)
    except Exception:  # noqa: BLE001 - gone or inaccessible: nothing to collect
        return []


def kill_left(procs: list) -> None:
    """SIGKILL each of ``procs`` still running (``psutil`` compares start times: a reused pid is not hit)."""
    for p in procs:
        try:
            if p.is_running():
                p.kill()
        except Exception:  # noqa: BLE001 - already gone
            pass
