"""The kubelet's probes against real listeners: httpGet by status code, tcpSocket by connection, exec by
exit code, and a named port looked up in the container."""

from __future__ import annotations

import asyncio
import sys

import pytest
from aiohttp import web

from gpupoc.sim.controllers.kubelet_probes import run_probe


async def _listener(status: int) -> tuple[web.AppRunner, int]:
    async def healthz(request: web.Request) -> web.Response:
        return web.Response(status=status, text="x")

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, site._server.sockets[0].getsockname()[1]


@pytest.mark.parametrize(("status", "ok"), [(200, True), (302, True), (503, False)])
def test_http_get_succeeds_from_200_to_399(status, ok):
    async def go():
        runner, port = await _listener(status)
        try:
            container = {"ports": [{"name": "http", "containerPort": port}]}
            return await run_probe({"httpGet": {"path": "/healthz", "port": "http"}}, container, "127.0.0.1")
        finally:
            await runner.cleanup()

    result = asyncio.run(go())
    assert result.ok is ok
    if not ok:
        assert result.output == "HTTP probe failed with statuscode: 503"


def test_tcp_socket_fails_where_nothing_listens_and_succeeds_where_something_does():
    async def go():
        runner, port = await _listener(200)
        try:
            up = await run_probe({"tcpSocket": {"port": port}}, {}, "127.0.0.1")
        finally:
            await runner.cleanup()
        down = await run_probe({"tcpSocket": {"port": port}}, {}, "127.0.0.1")
        return up, down

    up, down = asyncio.run(go())
    assert up.ok and not down.ok and "dial tcp" in down.output


def test_exec_is_judged_by_its_exit_code():
    ok = asyncio.run(run_probe({"exec": {"command": [sys.executable, "-c", "print('fine')"]}}, {}, "10.244.0.2"))
    bad = asyncio.run(run_probe({"exec": {"command": [sys.executable, "-c", "raise SystemExit(3)"]}}, {},
                                "10.244.0.2"))
    assert ok.ok and ok.output == "fine" and not bad.ok


def test_a_pod_ip_is_probed_at_its_loopback_address():
    from gpupoc.sim.pod_network import host_address

    assert host_address("10.244.1.7") == "127.244.1.7" and host_address("127.0.0.1") == "127.0.0.1"


def test_a_liveness_kill_ends_a_process_that_ignores_sigterm_after_the_grace(tmp_path):
    from types import SimpleNamespace

    from gpupoc.sim.controllers.kubelet_pods import ContainerRun, PodRun
    from gpupoc.sim.controllers.kubelet_probes import kill_container
    from gpupoc.sim.controllers.kubelet_runtime import ProcessHandle
    from gpupoc.sim.logs import ContainerLog

    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); " \
               "time.sleep(120)"

    async def go():
        log = ContainerLog()
        handle = await ProcessHandle.spawn([sys.executable, "-c", stubborn], {}, tmp_path, log, None)
        waiting = asyncio.ensure_future(handle.wait())
        while not log.lines:  # SIGTERM is ignored only once the handler is set
            await asyncio.sleep(0.05)
        c = ContainerRun(spec={"name": "server"}, entry=None)
        pr = PodRun(("ns", "p"), "uid", "node", "Always", [c], "10.0.0.1", "10.244.0.2", "")
        pr.handles["server"] = handle
        await kill_container(SimpleNamespace(timing=SimpleNamespace(termination_grace_seconds=0.2)), pr, c)
        return await asyncio.wait_for(waiting, 30)

    assert asyncio.run(go()) == 137  # SIGKILL: 128 + 9
