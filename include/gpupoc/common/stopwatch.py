"""Where a task's time went: named stages timed one after the other, for its log and its evidence."""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator

log = logging.getLogger(__name__)


@dataclass
class Stopwatch:
    """Seconds per named stage, in the order first timed (a stage timed twice adds up); ``clock`` is injected
    for tests."""

    task: str
    clock: Callable[[], float] = time.perf_counter
    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as ``name``, and log it when it ends (even by an exception)."""
        start = self.clock()
        try:
            yield
        finally:
            took = self.clock() - start
            self.seconds[name] = self.seconds.get(name, 0.0) + took
            log.info("%s: %s took %.2f s", self.task, name, took)

    def as_dict(self) -> dict:
        """The stages and their total, rounded to milliseconds."""
        stages = {k: round(v, 3) for k, v in self.seconds.items()}
        return {"task": self.task, "stages": stages, "total": round(sum(self.seconds.values()), 3)}
