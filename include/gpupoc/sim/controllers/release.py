"""The ``release-staggered`` behaviour: lifted scheduling gates take effect one by one, in a seeded order.

A real control plane takes a wave's gate removals as separate updates, and the scheduler sees the pods
arrive over some time, not in the order they were submitted: low-priority pods may be bound first and be
preempted by higher-priority pods that arrive later. Here each pod whose last scheduling gate was lifted
joins the scheduling queue only after a delay of 0 to ``MAX_DELAY`` seconds, fixed by the behaviour seed and
the pod's namespace and name (so a seed gives the same order on every run, and other seeds other orders).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from gpupoc.sim.behaviours import seeded

MAX_DELAY = 2.0
Key = tuple[str, str]


def release_delay(seed: int, key: Key) -> float:
    """Seconds between the lifting of the pod's last gate and its arrival at the scheduler."""
    return seeded(seed, "release", *key).uniform(0.0, MAX_DELAY)


@dataclass
class StaggeredRelease:
    """Pods seen gated, and the ungated ones held back until their arrival time (``clock`` seconds)."""

    seed: int
    clock: Callable[[], float] = time.monotonic
    gated: set[Key] = field(default_factory=set)
    held: dict[Key, float] = field(default_factory=dict)

    def hold(self, key: Key, gated_now: bool, schedulable: bool) -> bool:
        """Track one pod change; True when the pod must stay out of the scheduling queue for now."""
        if gated_now:
            self.gated.add(key)
            self.held.pop(key, None)
            return False
        if not schedulable:  # deleted, bound, ended: nothing to hold
            self.gated.discard(key)
            self.held.pop(key, None)
            return False
        if key in self.held:
            return True
        if key in self.gated:
            self.gated.discard(key)
            self.held[key] = self.clock() + release_delay(self.seed, key)
            return True
        return False

    def due(self) -> list[Key]:
        """The held pods whose time has come (no longer held), earliest first."""
        now = self.clock()
        ready = sorted((t, k) for k, t in self.held.items() if t <= now)
        for _, k in ready:
            del self.held[k]
        return [k for _, k in ready]
