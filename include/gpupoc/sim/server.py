"""Run the simulated cluster: bootstrap the state, serve the API on 127.0.0.1, run the controllers."""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from gpupoc.exceptions import ConfigError
from gpupoc.sim.pod_network import claim_network
from gpupoc.sim import quota
from gpupoc.sim.api.app import build_app
from gpupoc.sim.api.tls import Pki, ensure_pki
from gpupoc.sim.audit_webhook import WebhookBackend, WebhookConfig
from gpupoc.sim.bootstrap import bootstrap
from gpupoc.sim.cluster import ClusterState, make_identities
from gpupoc.sim.config import ClusterConfig
from gpupoc.sim.controllers import loop
from gpupoc.sim.behaviours import Behaviour
from gpupoc.sim.faults import Fault
from gpupoc.sim.kubeconfig import write_kubeconfig

log = logging.getLogger(__name__)


@dataclass
class RunningServer:
    """A started server: its URL, state and the aiohttp runner (stop it with ``stop``)."""

    url: str
    port: int
    http_url: str
    state: ClusterState
    runner: web.AppRunner
    controllers: asyncio.Task | None
    stop_event: asyncio.Event

    async def stop(self) -> None:
        self.stop_event.set()
        if self.controllers is not None:
            try:
                await asyncio.wait_for(self.controllers, 15)
            except asyncio.TimeoutError:
                self.controllers.cancel()
                await asyncio.gather(self.controllers, return_exceptions=True)
            except Exception:  # a controller crash must not block shutdown
                log.exception("controller loop ended with an error")
        await self.runner.cleanup()


def make_state(config: ClusterConfig, data_dir: Path, faults: frozenset[Fault] = frozenset(),
               behaviours: frozenset[Behaviour] = frozenset(), behaviour_seed: int = 0) -> ClusterState:
    """A bootstrapped cluster state with fresh tokens."""
    state = ClusterState(config=config, data_dir=Path(data_dir), faults=faults, behaviours=behaviours,
                         behaviour_seed=behaviour_seed)
    state.identities = make_identities(config)
    bootstrap(state)
    quota.refresh(state)
    return state


def _controller_loop(state: ClusterState, stop: asyncio.Event):
    return loop.run_controllers(state, stop)


async def start_server(state: ClusterState, port: int = 0, host: str = "127.0.0.1",
                       run_controllers: bool = True, pki: Pki | None = None) -> RunningServer:
    """Serve ``state`` on host:port (0: a free port) and start the controller loop in this event loop.

    With ``pki`` the main port speaks TLS (kubectl sends tokens only over TLS) and a second, plain-HTTP port
    serves the same API for clients that do not need TLS.
    """
    app = build_app(state)
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=2.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=1024, ssl_context=pki.ssl_context() if pki else None)
    await site.start()
    actual = runner.addresses[0][1]
    scheme = "https" if pki else "http"
    http_url = f"http://{host}:{actual}"
    if pki:
        plain = web.TCPSite(runner, host, 0, backlog=1024)
        await plain.start()
        http_url = f"http://{host}:{runner.addresses[1][1]}"
    stop = asyncio.Event()
    task = None
    if run_controllers:
        task = asyncio.create_task(_controller_loop(state, stop), name="controllers")
        state.kick()
    return RunningServer(f"{scheme}://{host}:{actual}", actual, http_url, state, runner, task, stop)


async def serve(config: ClusterConfig, data_dir: Path, port: int = 0, kubeconfig: Path | None = None,
                faults: frozenset[Fault] = frozenset(), behaviours: frozenset[Behaviour] = frozenset(),
                behaviour_seed: int = 0, audit_webhook: WebhookConfig | None = None) -> None:
    """``gpupoc sim serve``: run until SIGTERM/SIGINT; writes the kubeconfig and ``<data-dir>/sim.json``.
    With ``audit_webhook`` the audit events also go to that webhook, batched (``sim.audit_webhook``)."""
    data_dir = Path(data_dir).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    kubeconfig = Path(kubeconfig or data_dir / "kubeconfig").resolve()
    state = make_state(config, data_dir, faults, behaviours, behaviour_seed)
    state.network, release_network = claim_network()  # pods and ClusterIPs no other cluster on this host uses
    atexit.register(release_network)  # a killed server's slot is taken over by the next cluster
    if audit_webhook is not None:
        state.audit.sinks.append(WebhookBackend(audit_webhook).start())
    pki = ensure_pki(data_dir / "pki")
    try:
        server = await start_server(state, port, pki=pki)
    except OSError as exc:
        raise ConfigError("--port", [f"port: cannot listen on 127.0.0.1:{port} ({exc.strerror}); "
                                     "choose a free port or pass --port 0"]) from None
    write_kubeconfig(kubeconfig, server.url, config.name, state.identities, ca_pem=pki.ca_pem())
    # Python clients send tokens over plain HTTP too: a cheaper kubeconfig for them (kubectl needs TLS).
    kubeconfig_http = kubeconfig.with_name(kubeconfig.name + "-http")
    write_kubeconfig(kubeconfig_http, server.http_url, config.name, state.identities)
    info_path = data_dir / "sim.json"
    info = {"url": server.url, "pid": os.getpid(), "kubeconfig": str(kubeconfig), "http_url": server.http_url,
            "kubeconfig_http": str(kubeconfig_http), "ca_cert": str(pki.ca_cert),
            "audit_log": str(state.audit_log_path), "mode": config.scheduler.value,
            "faults": sorted(f.value for f in faults),
            "behaviours": sorted(b.value for b in behaviours), "behaviour_seed": behaviour_seed,
            "audit_webhook": audit_webhook.server if audit_webhook is not None else None}
    tmp = info_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, info_path)
    log.info("serving %s (scheduler %s, kubeconfig %s, faults %s, behaviours %s, seed %d)", server.url,
             info["mode"], kubeconfig, info["faults"] or "none", info["behaviours"] or "none", behaviour_seed)
    print(f"gpupoc sim: serving {server.url}  kubeconfig {kubeconfig}", flush=True)
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, done.set)
    watcher = asyncio.create_task(done.wait())
    while not done.is_set():
        waiters = {watcher} | ({server.controllers} if server.controllers is not None else set())
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        ctl = server.controllers
        if ctl is not None and ctl.done() and not done.is_set():
            exc = None if ctl.cancelled() else ctl.exception()
            log.error("controller loop stopped unexpectedly (%r); restarting it in 1 s", exc)
            await asyncio.sleep(1)
            server.controllers = asyncio.create_task(_controller_loop(state, server.stop_event), name="controllers")
    watcher.cancel()
    try:
        await server.stop()  # the app's cleanup closes the audit log
    finally:
        info_path.unlink(missing_ok=True)
        release_network()
    print("gpupoc sim: stopped", flush=True)
