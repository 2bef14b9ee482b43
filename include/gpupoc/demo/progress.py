"""Progress lines while the DAG runs go on: one line per change of a run's state or task counts."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping

# Task states in the order a reader follows a run: done, working, waiting, not started, bad.
STATE_ORDER = ("success", "running", "deferred", "waiting", "queued", "scheduled", "up_for_reschedule",
               "up_for_retry", "restarting", "none", "skipped", "upstream_failed", "failed", "removed")
# The sensors waiting for the GPU lease or the wave's release (deferred; older runs rescheduled at every
# poke) pass through scheduled, queued and running before they wait: all of that is "waiting", not a change.
RESCHEDULING_SENSORS = frozenset({"cluster_acquired", "wave_released"})
_SENSOR_WAIT = frozenset({"up_for_reschedule", "scheduled", "queued", "running"})


def elapsed(seconds: float) -> str:
    """``0:07``, ``3:05``, ``1:02:03``."""
    s = max(0, int(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def task_counts(states: Mapping[str, int]) -> str:
    """``success 5, running 2, deferred 8`` in STATE_ORDER (unknown states last, by name); '-' when empty."""
    known = [(s, states[s]) for s in STATE_ORDER if states.get(s)]
    other = sorted((s, n) for s, n in states.items() if s not in STATE_ORDER and n)
    return ", ".join(f"{s} {n}" for s, n in known + other) or "-"


def progress_line(seconds: float, dag_id: str, run_state: str, states: Mapping[str, int], width: int = 22) -> str:
    """``[ 3:05] poc_utilization        running  success 5, running 2``."""
    return f"[{elapsed(seconds):>5}] {dag_id:<{width}} {run_state:<8} {task_counts(states)}"


def normalise_states(task_instances: list[dict]) -> Counter:
    """Task instances as the API gives them counted by state (None: "none"; a poking sensor: "waiting")."""
    out: Counter = Counter()
    for ti in task_instances:
        state = ti.get("state")
        state = "none" if state in (None, "", "None") else str(state)
        if ti.get("task_id") in RESCHEDULING_SENSORS and state in _SENSOR_WAIT:
            state = "waiting"
        out[state] += 1
    return out


@dataclass
class ProgressTracker:
    """Remembers the last (run state, counts) of each run; ``update`` returns a line only on change."""

    started: float
    width: int = 22
    last: dict[str, tuple[str, tuple[tuple[str, int], ...]]] = field(default_factory=dict)

    def update(self, now: float, dag_id: str, run_state: str, states: Mapping[str, int]) -> str | None:
        key = (run_state, tuple(sorted((k, v) for k, v in states.items() if v)))
        if self.last.get(dag_id) == key:
            return None
        self.last[dag_id] = key
        return progress_line(now - self.started, dag_id, run_state, states, self.width)
