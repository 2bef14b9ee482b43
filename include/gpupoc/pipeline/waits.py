"""Every wait in the pipeline says what it waits for, since when and until when.

A task that waits (for the GPU lease, for the wave's pods, for outcomes, for an alert) writes a note to
its run's ``waits/<task>.json`` (beside the evidence, not part of it) and removes it when it stops waiting;
``gpupoc demo`` prints the notes of the running class when nothing else has changed for a while.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from gpupoc.common.timefmt import parse_time, rfc3339

WAITS_DIR = "waits"


@dataclass(frozen=True)
class WaitNote:
    """One task's current wait."""

    task: str
    what: str
    since: datetime
    until: datetime

    def line(self, now: datetime | None = None) -> str:
        """``observe waits for 3 workload outcomes (a-1, b-2) since 09:00:05, until 09:16:05 (15:40 left)``."""
        now = now or datetime.now(timezone.utc)
        left = max(0, int((self.until - now).total_seconds()))
        return (f"{self.task} waits for {self.what} since {self.since:%H:%M:%S}, until {self.until:%H:%M:%S} "
                f"({left // 60}:{left % 60:02d} left)")


def waits_dir(run_dir: Path) -> Path:
    return Path(run_dir) / WAITS_DIR


def note_path(run_dir: Path, task: str) -> Path:
    return waits_dir(run_dir) / f"{task}.json"


def write_note(run_dir: Path, task: str, what: str, until_seconds: float, since: datetime | None = None) -> WaitNote:
    """Record that ``task`` waits for ``what`` for at most ``until_seconds`` more (``since`` kept if given)."""
    now = datetime.now(timezone.utc)
    path = note_path(run_dir, task)
    if since is None and path.is_file():
        old = read_note(path)
        since = old.since if old and old.what == what else None
    note = WaitNote(task, what, since or now, now + timedelta(seconds=max(0.0, until_seconds)))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({**asdict(note), "since": rfc3339(note.since), "until": rfc3339(note.until)}))
    tmp.replace(path)
    return note


def clear_note(run_dir: Path, task: str) -> None:
    note_path(run_dir, task).unlink(missing_ok=True)


def read_note(path: Path) -> WaitNote | None:
    try:
        d = json.loads(Path(path).read_text())
        return WaitNote(d["task"], d["what"], parse_time(d["since"]), parse_time(d["until"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_notes(run_dir: Path) -> list[WaitNote]:
    """The current waits of one run, oldest first."""
    d = waits_dir(run_dir)
    notes = [read_note(p) for p in sorted(d.glob("*.json"))] if d.is_dir() else []
    return sorted((n for n in notes if n), key=lambda n: n.since)
