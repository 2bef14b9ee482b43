"""Waits that hold on any machine: a wait runs out only when what it watches stops changing.

A fixed deadline ("the run ends within 420 s") fails on a loaded machine that is merely slow. Here a wait
is given the budget of one step of the awaited work, derived from that work (a pod's run time plus the
heartbeat timeout after which Airflow retries a task, say). The budget starts again whenever the observed
state changes, so a slow machine that keeps making progress is waited for, and a stall fails after one
step's budget, saying what was awaited and what was seen last. pytest-timeout stays the guard against a
wait that never ends.
"""

from __future__ import annotations

import time
from typing import Callable, Hashable, TypeVar

T = TypeVar("T")


def wait_for(what: str, observe: Callable[[], T], done: Callable[[T], bool], *, step_seconds: float,
             poll: float = 0.5, describe: Callable[[T], str] = repr,
             progress: Callable[[T], Hashable] | None = None, transient: tuple[type[Exception], ...] = (),
             clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> T:
    """Poll ``observe()`` until ``done(value)``; returns that value.

    Fails (AssertionError) when ``progress(value)`` (default: ``describe(value)``) has not changed for
    ``step_seconds``, naming ``what`` and what was seen last. An observation that raises one of
    ``transient`` (a busy server timing out) is no observation: the wait polls again."""
    key_of = progress or describe
    last: object = object()
    seen, failed = "nothing yet", ""
    changed_at = clock()
    while True:
        try:
            value = observe()
        except transient as exc:
            failed = f" (then the poll failed: {exc})"
        else:
            if done(value):
                return value
            key, seen, failed = key_of(value), describe(value), ""
            if key != last:
                last, changed_at = key, clock()
        now = clock()
        if now - changed_at > step_seconds:
            raise AssertionError(f"still waiting for {what}: nothing changed for {now - changed_at:.0f} s "
                                 f"(one step may take {step_seconds:.0f} s); last seen: {seen}{failed}")
        sleep(poll)


def first_truthy(what: str, predicate: Callable[[], T], *, step_seconds: float, poll: float = 0.3,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> T:
    """``predicate()``'s first truthy value: ``wait_for`` with ``bool`` as its end, so a stall fails once the
    falsy values seen have not changed for ``step_seconds``."""
    return wait_for(what, predicate, bool, step_seconds=step_seconds, poll=poll, clock=clock, sleep=sleep)


async def until(what: str, holds: Callable[[], object], *, step_seconds: float,
                seen: Callable[[], Hashable] = lambda: None, poll: float = 0.05,
                clock: Callable[[], float] = time.monotonic) -> None:
    """``wait_for`` inside an event loop: poll ``holds()`` (awaiting ``poll`` between), fail naming ``what``
    and ``seen()`` once ``seen()`` has not changed for ``step_seconds``."""
    import asyncio

    last: object = object()
    changed_at = clock()
    while not holds():
        now, key = clock(), seen()
        if key != last:
            last, changed_at = key, now
        elif now - changed_at > step_seconds:
            raise AssertionError(f"still waiting for {what}: nothing changed for {now - changed_at:.0f} s "
                                 f"(one step may take {step_seconds:.0f} s); last seen: {key}")
        await asyncio.sleep(poll)
