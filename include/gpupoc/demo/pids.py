"""Every process the demo starts, by pid, in ``var/demo/pids.json``; ``gpupoc down`` stops exactly those.

An entry keeps a marker its command line must contain, so a pid reused by an unrelated process after a
reboot or a crash is never signalled. Processes that lead their own session (``group``) are stopped with
their whole process group: the simulated cluster's workload processes, Airflow's task processes.
"""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gpupoc.common.processes import descendants, kill_left, pid_alive


@dataclass(frozen=True)
class ProcessEntry:
    """One started process: its pid, what its command line contains, whether it leads its own group."""

    name: str
    pid: int
    mark: str
    group: bool = True
    started_at: float = 0.0


@dataclass
class PidFile:
    """The demo's process table (``var/demo/pids.json``) with the settings of the run that wrote it."""

    path: Path
    entries: dict[str, ProcessEntry] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> "PidFile":
        """The table at ``path``; an absent or unreadable file is an empty table."""
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(Path(path))
        entries = {}
        for name, e in (raw.get("processes") or {}).items():
            try:
                entries[name] = ProcessEntry(name=name, pid=int(e["pid"]), mark=str(e.get("mark", "")),
                                             group=bool(e.get("group", True)),
                                             started_at=float(e.get("started_at", 0.0)))
            except (KeyError, TypeError, ValueError):
                continue
        return cls(Path(path), entries, dict(raw.get("meta") or {}))

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = {"processes": {n: {k: v for k, v in asdict(e).items() if k != "name"} for n, e in self.entries.items()},
                "meta": self.meta}
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)

    def record(self, name: str, pid: int, mark: str, group: bool = True) -> ProcessEntry:
        """Add (or replace) one process and write the file at once."""
        entry = ProcessEntry(name, int(pid), mark, group, time.time())
        self.entries[name] = entry
        self.save()
        return entry

    def forget(self, *names: str) -> None:
        for n in names:
            self.entries.pop(n, None)
        self.save()

    def alive(self) -> dict[str, bool]:
        return {n: pid_alive(e.pid, e.mark) for n, e in self.entries.items()}


def _signal(entry: ProcessEntry, sig: int) -> None:
    try:
        if entry.group and os.getpgid(entry.pid) == entry.pid:
            os.killpg(entry.pid, sig)
        else:
            os.kill(entry.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except (ChildProcessError, OSError):
        pass


def stop(entry: ProcessEntry, grace: float = 15.0) -> str:
    """SIGTERM the process (its group when it leads one), SIGKILL after ``grace``, then any descendant left
    (in another session or not); returns what happened."""
    if not pid_alive(entry.pid, entry.mark):
        return "not running"
    children = descendants(entry.pid)
    _signal(entry, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while pid_alive(entry.pid, entry.mark) and time.monotonic() < deadline:
        _reap(entry.pid)
        time.sleep(0.1)
    outcome = "stopped"
    if pid_alive(entry.pid, entry.mark):
        outcome = "killed"
    if outcome == "killed":
        _signal(entry, signal.SIGKILL)
    if entry.group:
        try:  # leftovers of the group (workload processes, task supervisors): the group id is the leader's pid
            os.killpg(entry.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    kill_left(children)
    _reap(entry.pid)
    return outcome


def stop_all(table: PidFile, order: list[str] | None = None, grace: float = 15.0) -> dict[str, str]:
    """Stop every recorded process (``order`` first, the rest after) and empty the table."""
    names = [n for n in (order or []) if n in table.entries] + [n for n in table.entries if n not in (order or [])]
    result = {}
    for name in names:
        result[name] = stop(table.entries[name], grace)
    table.entries.clear()
    table.save()
    return result
