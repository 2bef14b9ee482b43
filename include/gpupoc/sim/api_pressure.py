"""API first: the controllers step aside while requests arrive in a burst.

On a real cluster the API server, kube-scheduler and the kubelets are separate processes on separate machines:
a burst of writes (a wave's 1,000 gate removals) is answered at the API server's pace while the kubelets start
containers elsewhere. The simulated cluster runs them all on one event loop, so a controller pass that starts
hundreds of pods holds the requests behind it. ``ApiPressure`` counts the requests the server receives
(``note_request``, called for every request but watches); at the top of each controller pass the loop awaits
``yield_to_requests``, which waits while more than ``burst`` requests arrived within the last ``window_s``,
for at most ``max_defer_s`` per pass, so the controllers lag a burst by at most that long (docs/simulated-cluster.md).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

POLL_SECONDS = 0.002


@dataclass
class ApiPressure:
    """Recent request arrivals and how long the controllers stepped aside for them."""

    burst: int = 16  # requests within ``window_s`` that make a burst
    window_s: float = 0.05
    max_defer_s: float = 1.0  # the longest a controller pass waits for a burst to pass
    clock: Callable[[], float] = time.monotonic
    deferred_s: float = 0.0  # seconds the controllers waited, in all
    deferrals: int = 0  # passes that waited
    _arrivals: deque[float] = field(default_factory=deque)

    def note_request(self) -> None:
        """A request (not a watch) arrived now."""
        now = self.clock()
        self._arrivals.append(now)
        self._forget_before(now - self.window_s)

    def busy(self) -> bool:
        """Whether more than ``burst`` requests arrived within the last ``window_s``."""
        self._forget_before(self.clock() - self.window_s)
        return len(self._arrivals) > self.burst

    async def yield_to_requests(self) -> float:
        """Wait while requests arrive in a burst, at most ``max_defer_s``; returns the seconds waited."""
        if not self.busy():
            return 0.0
        started = self.clock()
        while self.busy() and self.clock() - started < self.max_defer_s:
            await asyncio.sleep(POLL_SECONDS)
        waited = self.clock() - started
        self.deferred_s += waited
        self.deferrals += 1
        return waited

    def _forget_before(self, cutoff: float) -> None:
        arrivals = self._arrivals
        while arrivals and arrivals[0] < cutoff:
            arrivals.popleft()
