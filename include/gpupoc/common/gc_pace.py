"""How often Python's cyclic garbage collector runs in the harness's own task processes.

A task that reads a 10,000-pod wave builds millions of dicts and lists (pods, events, observations) and keeps
them. With CPython's default thresholds (700, 10, 10) the collector runs after every 700 new containers and
walks ever more of them as the heap grows: loading the observer's 58 MB of pods took 0.5-0.9 CPU-seconds with it,
0.3 without it, on the same cores the platform under test runs on. JSON-like data holds no reference cycles, so
collecting less often frees the same memory (reference counting frees it), only later for the rare cycle.
"""

from __future__ import annotations

import gc

# a young collection after 50,000 new containers instead of 700; the older generations as rarely in proportion
LARGE_DATA_THRESHOLDS = (50_000, 20, 100)


def pace_for_large_data() -> tuple[int, int, int]:
    """Collect cycles at ``LARGE_DATA_THRESHOLDS`` in this process from now on; returns the thresholds before."""
    before = gc.get_threshold()
    gc.set_threshold(*LARGE_DATA_THRESHOLDS)
    return before


def freeze_before_fork() -> int:
    """Move every object this process holds now out of the collector's reach (``gc.freeze``), as before a fork:
    the children never walk the modules their parent loaded for them, so their collections are shorter and
    leave those shared pages unwritten. Returns how many objects are frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


# the working set a step handed over to be let go of when its process ends (``let_go_at_exit``)
_KEPT: list[object] = []


def let_go_at_exit(*working_set: object) -> None:
    """Keep ``working_set`` (a step's pods, events and observations: hundreds of MiB at 10,000 pods) until this
    process ends instead of freeing it object by object as the step returns (0.3 s for the observer's): a task
    process ends with ``os._exit`` once its result is sent, so that time is never spent before the next task may
    start. A later call lets go of the earlier set, so a process running several steps keeps one at most."""
    _KEPT[:] = working_set
