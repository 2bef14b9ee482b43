"""Container logs: kept per pod and container until the pod is deleted; followers are woken on append."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime

from gpupoc.sim import clock


@dataclass
class ContainerLog:
    """Timestamped lines of one container; ``closed`` once the container has terminated."""

    lines: list[tuple[datetime, str]] = field(default_factory=list)
    closed: bool = False
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def append(self, text: str, ts: datetime | None = None) -> None:
        self.lines.append((ts or clock.now(), text.rstrip("\n")))
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def clear(self) -> None:
        """Drop the content (the ``logs-lost-on-failure`` fault)."""
        self.lines.clear()
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_change(self, timeout: float) -> None:
        """Wait until a line is appended or the log is closed (or ``timeout`` passes)."""
        ev = self._changed
        try:
            await asyncio.wait_for(ev.wait(), timeout)
        except asyncio.TimeoutError:
            pass


class LogStore:
    """Logs of every container, keyed by (namespace, pod, container)."""

    def __init__(self) -> None:
        self._logs: dict[tuple[str, str, str], ContainerLog] = {}

    def get(self, namespace: str, pod: str, container: str, create: bool = False) -> ContainerLog | None:
        key = (namespace, pod, container)
        if create and key not in self._logs:
            self._logs[key] = ContainerLog()
        return self._logs.get(key)

    def drop_pod(self, namespace: str, pod: str) -> None:
        for key in [k for k in self._logs if k[0] == namespace and k[1] == pod]:
            log = self._logs.pop(key)
            log.close()
