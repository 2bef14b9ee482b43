"""API first: the controllers step aside while requests arrive in a burst, for at most a bounded time, and
watches are not requests that count."""

from __future__ import annotations

import asyncio

from aiohttp.test_utils import TestClient, TestServer

from gpupoc.sim.api.app import build_app
from gpupoc.sim.api_pressure import ApiPressure
from gpupoc.sim.cluster import make_identities
from gpupoc.sim.controllers.loop import run_controllers
from tests.waiting import until

from .behaviour_helpers import make_state, pod, submit

PODS = "/api/v1/namespaces/team-vision/pods"


class FakeClock:
    """A monotonic clock the test moves; counts how often it was read."""

    def __init__(self, now: float = 100.0, step: float = 0.0):
        self.now, self.step, self.reads = now, step, 0

    def __call__(self) -> float:
        self.reads += 1
        self.now += self.step
        return self.now


def test_a_burst_is_more_requests_than_allowed_within_the_window():
    clock = FakeClock()
    p = ApiPressure(burst=3, window_s=0.05, clock=clock)
    for _ in range(3):
        p.note_request()
    assert not p.busy(), "exactly the burst is not yet pressure"
    p.note_request()
    assert p.busy()
    clock.now += 0.051
    assert not p.busy(), "requests older than the window no longer count"


def test_a_quiet_server_costs_the_controllers_nothing():
    p = ApiPressure(clock=FakeClock())
    assert asyncio.run(p.yield_to_requests()) == 0.0
    assert p.deferrals == 0 and p.deferred_s == 0.0


def test_the_controllers_wait_until_the_burst_has_passed():
    clock = FakeClock(step=0.001)  # each read a millisecond later: the burst ages while the pass waits
    p = ApiPressure(burst=2, window_s=0.05, max_defer_s=1.0, clock=clock)
    for _ in range(5):
        p.note_request()
    waited = asyncio.run(p.yield_to_requests())
    assert 0.04 <= waited < 0.1, "waited for the window to clear (the third newest request to age), not the cap"
    assert not p.busy() and p.deferrals == 1 and p.deferred_s == waited


def test_an_endless_burst_holds_the_controllers_no_longer_than_the_cap():
    clock = FakeClock(step=0.0001)
    p = ApiPressure(burst=2, window_s=0.05, max_defer_s=0.3, clock=clock)

    async def endless() -> float:
        async def keep_asking() -> None:
            while True:
                for _ in range(5):
                    p.note_request()
                await asyncio.sleep(0)

        asker = asyncio.get_running_loop().create_task(keep_asking())
        await asyncio.sleep(0)  # the burst has begun
        try:
            return await p.yield_to_requests()
        finally:
            asker.cancel()

    waited = asyncio.run(endless())
    assert p.deferrals == 1
    assert 0.3 <= waited < 1.0, "the pass went ahead once the cap was reached, though the burst went on"


def _token(state) -> dict:
    token = next(t for t, ident in state.identities.items() if ident.context == "admin")
    return {"Authorization": f"Bearer {token}"}


def test_the_server_counts_requests_but_not_watches(tmp_path):
    state = make_state(tmp_path)
    state.identities = make_identities(state.config)
    state.api_pressure = ApiPressure(burst=1_000, window_s=3_600, clock=FakeClock())

    async def body() -> tuple[int, int]:
        async with TestClient(TestServer(build_app(state))) as client:
            for _ in range(3):
                assert (await client.get(PODS, headers=_token(state))).status == 200
            after_gets = len(state.api_pressure._arrivals)
            r = await client.get(f"{PODS}?watch=true&timeoutSeconds=1", headers=_token(state))
            await r.read()
            return after_gets, len(state.api_pressure._arrivals)

    after_gets, after_watch = asyncio.run(body())
    assert after_gets == 3
    assert after_watch == 3, "a watch is a stream, not a request in a burst"


def test_the_loop_places_nothing_during_a_burst_and_catches_up_after(tmp_path):
    state = make_state(tmp_path)
    clock = FakeClock()  # stands still: the burst lasts until the test moves it
    state.api_pressure = ApiPressure(burst=2, window_s=0.05, max_defer_s=3_600, clock=clock)

    async def scenario() -> tuple[str | None, str | None]:
        stop = asyncio.Event()
        loop_task = asyncio.get_running_loop().create_task(run_controllers(state, stop, tick=0.05))
        await until("the loop's first pass", lambda: clock.reads > 0 or loop_task.done(), step_seconds=60)
        for _ in range(5):
            state.api_pressure.note_request()
        submit(state, "during-burst", gpus=1, gated=False)
        reads = clock.reads
        await until("the loop to look at the burst again", lambda: clock.reads > reads + 50 or loop_task.done(),
                    step_seconds=60)
        during = pod(state, "during-burst")["spec"].get("nodeName")
        clock.now += 1.0  # the burst has passed
        await until("the pod to be placed once the burst passed",
                    lambda: pod(state, "during-burst")["spec"].get("nodeName") or loop_task.done(), step_seconds=60)
        stop.set()
        await asyncio.wait_for(loop_task, 60)
        return during, pod(state, "during-burst")["spec"].get("nodeName")

    during, after = asyncio.run(scenario())
    assert during is None, "a controller pass ran while requests arrived in a burst"
    assert after, "the loop never caught up"
