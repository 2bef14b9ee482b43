"""Which wave items still lack their outcome while the wave runs, and what each one waits for.

An item is open while its latest pod waits or runs. Once that attempt ended, the item stays open only while
another attempt is to come:
- where the wave tasks' states are known (Airflow), while its task is still on it (running, deferred, up for
  retry); a task that ended closes it at once;
- else, while its task recorded that it resubmits (``TaskDecision``), or, before the task said anything,
  while the attempt's outcome allows one more (``classify_attempt`` on the records the task decides with,
  and ``next_attempt``), for at most ``wait_s`` after the attempt ended.
An item whose task ended, or said that no attempt follows, is closed at once: the observer never waits for an
attempt nobody will make. Pure functions over what the observer saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Callable

from gpupoc.pipeline.attempts import NextAttempt, TaskDecision, next_attempt
from gpupoc.pipeline.wave import TERMINAL
from gpupoc.pipeline.workload_outcome import OutcomeRecord

Key = tuple[str, str]


class TaskState(str, Enum):
    """Where an item's wave task is, as its orchestrator says."""

    ACTIVE = "active"   # scheduled, queued, running, deferred or up for retry: it may submit again
    ENDED = "ended"     # success, failed, skipped: no further attempt comes from it


@dataclass(frozen=True)
class Open:
    """A wave item still without its final outcome, and what it waits for."""

    item: str
    waiting_for: str
    after: str | None = None  # the ended attempt (pod) whose successor it waits for


@dataclass(frozen=True)
class Policy:
    """The plan's resubmission policy for the class (``resubmission``)."""

    limit: int = 0
    platform_requeues: bool = False
    wait_s: float = 60.0


@dataclass
class TaskView:
    """What the observer knows of the wave's tasks at one moment."""

    decisions: dict[Key, TaskDecision] = field(default_factory=dict)   # (namespace, pod) -> the task's word
    refused: dict[str, TaskDecision] = field(default_factory=dict)     # item -> a try whose pod was refused
    states: dict[str, TaskState] | None = None                         # item -> its task; None: unknown


def open_items(items: dict[str, str], seen: dict[str, list[str]], present: dict[Key, dict],
               ended_at: dict[Key, float], now: float, policy: Policy, tasks: TaskView,
               outcome_of: Callable[[Key], OutcomeRecord]) -> list[Open]:
    """Items whose outcome is not final yet (see the module docstring).

    ``seen``: item -> its pod names in creation order; ``present``: pods that exist now; ``ended_at``: when each
    pod was first seen ended or missing (monotonic seconds); ``outcome_of(key)``: the outcome of an ended
    attempt the task has not decided yet."""
    out = []
    for item, ns in items.items():
        names = seen.get(item) or []
        state = None if tasks.states is None else tasks.states.get(item)
        if not names:
            if state is TaskState.ENDED or (state is None and item in tasks.refused):
                continue
            out.append(Open(item, "its pod to be created"))
            continue
        key = (ns, names[-1])
        pod = present.get(key)
        phase = ((pod or {}).get("status") or {}).get("phase") or "Pending"
        if pod is not None and phase not in TERMINAL and not (pod.get("metadata") or {}).get("deletionTimestamp"):
            out.append(Open(item, f"{names[-1]} ({phase})"))
            continue
        waiting = _next_attempt(item, key, len(names), now - ended_at.get(key, now), policy, tasks, state, outcome_of)
        if waiting:
            out.append(Open(item, waiting, names[-1]))
    return out


def _next_attempt(item: str, key: Key, tries: int, since_s: float, policy: Policy, tasks: TaskView,
                  state: TaskState | None, outcome_of: Callable[[Key], OutcomeRecord]) -> str | None:
    """What the item waits for after its attempt ``key`` ended, or None when nothing more is to come."""
    decided = tasks.decisions.get(key)
    if state is TaskState.ENDED or (decided is not None and decided.next is NextAttempt.NONE):
        return None
    if decided is not None:
        outcome = decided.outcome
    else:
        outcome = outcome_of(key).outcome
        if next_attempt(outcome, tries, policy.limit, policy.platform_requeues) is NextAttempt.NONE:
            return None
    if state is TaskState.ACTIVE:
        return f"a new attempt after {key[1]} was {outcome.value} (its task retries)"
    if since_s < policy.wait_s:
        return f"a new attempt after {key[1]} was {outcome.value}"
    return None
