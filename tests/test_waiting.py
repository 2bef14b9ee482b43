"""The tests' wait: it waits as long as what it watches keeps changing, and a stall fails naming what it
waited for and what it saw last (a fake clock: no real time passes)."""

from __future__ import annotations

import pytest

from tests.waiting import wait_for


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_slow_wait_that_keeps_changing_is_waited_for_beyond_one_step():
    clock, seen = Clock(), iter(range(100))
    value = wait_for("the count to reach 50", lambda: next(seen), lambda v: v >= 50, step_seconds=2, poll=1,
                     clock=clock, sleep=clock.sleep)
    assert value == 50 and clock.now == 50, "50 s of waiting, each second a change: no step ran out"


def test_a_stall_fails_after_one_step_naming_what_it_waited_for_and_the_last_value():
    clock = Clock()
    with pytest.raises(AssertionError) as exc:
        wait_for("the run to end", lambda: {"state": "running"}, lambda v: v["state"] == "success",
                 step_seconds=30, poll=4, describe=lambda v: f"state {v['state']}", clock=clock, sleep=clock.sleep)
    assert str(exc.value) == ("still waiting for the run to end: nothing changed for 32 s (one step may take "
                              "30 s); last seen: state running")


def test_progress_decides_what_counts_as_a_change():
    clock, ticks = Clock(), iter(range(1000))
    with pytest.raises(AssertionError, match="nothing changed for 11 s"):
        wait_for("pods", lambda: (next(ticks), "2 pods"), lambda v: False, step_seconds=10, poll=1,
                 progress=lambda v: v[1], clock=clock, sleep=clock.sleep)


def test_the_event_loop_wait_fails_on_a_stall_naming_what_it_saw():
    import asyncio

    from tests.waiting import until

    clock = Clock()

    async def tick_clock():
        while True:
            clock.now += 1
            await asyncio.sleep(0)

    async def scenario():
        ticker = asyncio.create_task(tick_clock())
        try:
            await until("3 watches open", lambda: False, step_seconds=5, seen=lambda: "1 open", poll=0, clock=clock)
        finally:
            ticker.cancel()

    with pytest.raises(AssertionError, match=r"still waiting for 3 watches open: .*last seen: 1 open"):
        asyncio.run(scenario())


def test_a_poll_that_fails_with_a_transient_error_is_polled_again():
    clock = Clock()
    answers = iter([TimeoutError("busy"), TimeoutError("busy"), 1, 2, 3])

    def observe():
        value = next(answers)
        if isinstance(value, Exception):
            raise value
        return value

    assert wait_for("3", observe, lambda v: v == 3, step_seconds=10, poll=1, transient=(TimeoutError,),
                    clock=clock, sleep=clock.sleep) == 3
    with pytest.raises(AssertionError, match=r"last seen: nothing yet \(then the poll failed: busy\)"):
        wait_for("3", lambda: (_ for _ in ()).throw(TimeoutError("busy")), lambda v: True, step_seconds=2,
                 poll=1, transient=(TimeoutError,), clock=clock, sleep=clock.sleep)


def test_first_truthy_returns_the_first_truthy_value_and_a_stall_of_falsy_values_fails():
    from tests.waiting import first_truthy

    clock, values = Clock(), iter([None, None, [], ["pod-a"]])
    assert first_truthy("a pod", lambda: next(values), step_seconds=5, poll=1, clock=clock,
                        sleep=clock.sleep) == ["pod-a"]
    with pytest.raises(AssertionError, match="still waiting for a pod: nothing changed for 6 s"):
        first_truthy("a pod", lambda: None, step_seconds=5, poll=1, clock=clock, sleep=clock.sleep)
