"""The virtual image's serving mode tells its own time apart from the simulator's: its answers carry its model's
time in ``X-Gpupoc-Serve-Ms``, without the time the simulator's event loop kept it waiting (a fake clock)."""

from __future__ import annotations

import asyncio

from aiohttp.test_utils import TestClient, TestServer

from gpupoc.sim.controllers import virtual_serving as vs
from gpupoc.workload.lag import SERVE_MS_HEADER


def test_a_virtual_answer_carries_its_model_s_time_not_the_simulator_s_loop_lag(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(vs.time, "perf_counter", lambda: now[0])

    async def late_sleep(seconds: float) -> None:  # the loop wakes the handler 700 ms after its 20 ms
        now[0] += seconds + 0.7

    async def ask() -> tuple[int, str]:
        monkeypatch.setattr(vs.asyncio, "sleep", late_sleep)
        async with TestClient(TestServer(vs._app(0.02, ready_at=0.0))) as client:
            resp = await client.get("/v1/predict")
            return resp.status, resp.headers[SERVE_MS_HEADER]

    status, own = asyncio.run(ask())
    assert status == 200 and float(own) == 20.0, f"the replica's own time is its model's 20 ms, got {own}"
