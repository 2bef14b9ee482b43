"""Work done by a forked child process beside its parent: a task's CPU-bound save runs on the other core while
the task goes on (threads would take turns holding the interpreter's lock)."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Child:
    """A forked child doing one piece of work."""

    pid: int

    def join(self, timeout_s: float, step_s: float = 0.01) -> bool:
        """Wait up to ``timeout_s`` for the child: whether it did its work (it ended with 0). A child not done by
        then is killed, and counts as not done."""
        deadline = time.monotonic() + timeout_s
        while True:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status) == 0
            if time.monotonic() >= deadline:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                return False
            time.sleep(step_s)


def start_in_child(work: Callable[[], None]) -> Child:
    """Run ``work`` in a forked child, which ends with ``os._exit``: 0 when ``work`` returned, 1 when it raised.
    Nothing comes back but what ``work`` writes; the child flushes none of its parent's buffers and runs none of
    its exit handlers."""
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            work()
            code = 0
        finally:
            os._exit(code)
    return Child(pid)
