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
        self._by_pod: dict[tuple[str, str], set[str]] = {}  # (namespace, pod) -> container keys

    def get(self, namespace: str, pod: str, container: str, create: bool = False) -> ContainerLog | None:
        key = (namespace, pod, container)
        if create and key not in self._logs:
            self._put(key, ContainerLog())
        return self._logs.get(key)

    def _put(self, key: tuple[str, str, str], log: ContainerLog) -> None:
        self._logs[key] = log
        self._by_pod.setdefault((key[0], key[1]), set()).add(key[2])

    def rotate(self, namespace: str, pod: str, container: str) -> ContainerLog:
        """A restarted container: close the current log, keep it as the previous instance's log under
        ``"<container>:previous"`` (``kubectl logs --previous``) and start a new one."""
        key = (namespace, pod, container)
        old = self._logs.get(key)
        if old is not None:
            old.close()
            self._put((namespace, pod, f"{container}:previous"), old)
        new = ContainerLog()
        self._put(key, new)
        return new

    def previous(self, namespace: str, pod: str, container: str) -> ContainerLog | None:
        """The log of the container's previous instance (None before its first restart)."""
        return self._logs.get((namespace, pod, f"{container}:previous"))

    def drop_pod(self, namespace: str, pod: str) -> None:
        for container in self._by_pod.pop((namespace, pod), ()):
            log = self._logs.pop((namespace, pod, container), None)
            if log is not None:
                log.close()
