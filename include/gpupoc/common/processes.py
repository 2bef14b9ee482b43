"""Is a process ours and still running? Read from /proc, so a reused process id never passes for ours."""

from __future__ import annotations

from pathlib import Path


def cmdline(pid: int | None) -> str:
    """The process's command line ('' when it does not exist, is a zombie or cannot be read)."""
    if not pid or pid <= 0:
        return ""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[-1].split()[0] == "Z":
            return ""
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (OSError, IndexError):
        return ""


def pid_alive(pid: int | None, mark: str) -> bool:
    """True when ``pid`` runs (not a zombie) and its command line contains ``mark``."""
    line = cmdline(pid)
    return bool(line) and mark in line


def start_ticks(pid: int | None) -> int | None:
    """When ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat`` field 22); None when it is gone.
    A pid the kernel gave to a new process has another start time, so this tells a recycled id apart."""
    if not pid or pid <= 0:
        return None
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def process_running(pid: int | None) -> bool:
    """True while ``pid`` exists and is not a zombie, whatever its command line says (a process rewriting
    its title, or mid-exec, reads as an empty command line for a moment)."""
    if not pid or pid <= 0:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")
