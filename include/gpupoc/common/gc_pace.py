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
