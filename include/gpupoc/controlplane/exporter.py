"""gpupoc's exporter for a real cluster: dcgm-exporter's and kube-state-metrics' series computed from the API
server's nodes, pods, ResourceQuotas and ResourceSlices (listed through a kubeconfig, nothing else dialled), served on 127.0.0.1 at
the paths the simulated cluster serves them: ``/metrics`` (dcgm-exporter) and ``/metrics/kube-state``
(kube-state-metrics). ``gpupoc stack up --metrics-url URL`` points Prometheus's two jobs at it.

In-process: ``start_exporter(kubeconfig, port=0) -> Exporter`` (``url``, ``stop()``). As a process:
``exporter_process.spawn_exporter`` runs ``python -m gpupoc.controlplane.exporter`` (``main``). An API server that
does not answer makes the scrape fail (503 naming the endpoint and the fix), so Prometheus records the target down
rather than stale figures."""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

import yaml

from gpupoc.controlplane.exporter_gpus import Allocator, EnergyMeter, cluster_cards
from gpupoc.exceptions import GpupocError, SourceUnavailable
from gpupoc.kube.dcgm import dcgm_exposition
from gpupoc.kube.dra import RESOURCE_SLICES
from gpupoc.kube.kube_state import render_kube_state
from gpupoc.pipeline.k8s import ClientFactory, KubeCaller

DCGM_PATH, KUBE_STATE_PATH = "/metrics", "/metrics/kube-state"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LISTS = {"nodes": "/api/v1/nodes", "pods": "/api/v1/pods", "resourcequotas": "/api/v1/resourcequotas"}
OPTIONAL = {"resourceslices": RESOURCE_SLICES}  # DRA GPUs; a cluster without them (or no right to list) has none
SNAPSHOT_SECONDS = 1.0  # both paths of one scrape read the same listing


@dataclass(frozen=True)
class Snapshot:
    nodes: list[dict]
    pods: list[dict]
    quotas: list[dict]
    slices: list[dict] = field(default_factory=list)


@dataclass
class ClusterReader:
    """Lists nodes, pods and ResourceQuotas; a listing younger than ``max_age`` seconds is reused."""

    caller: KubeCaller
    clock: Callable[[], float] = time.monotonic
    max_age: float = SNAPSHOT_SECONDS
    _last: tuple[float, Snapshot] | None = None

    def snapshot(self) -> Snapshot:
        now = self.clock()
        if self._last is not None and 0 <= now - self._last[0] < self.max_age:
            return self._last[1]
        snap = Snapshot(*(self._list(path) for path in LISTS.values()),
                        *(self._list(path, optional=True) for path in OPTIONAL.values()))
        self._last = (now, snap)
        return snap

    def _list(self, path: str, optional: bool = False) -> list[dict]:
        r = self.caller.call("GET", path)
        if optional and (not r.ok or not isinstance(r.body, dict)):
            return []
        if not r.ok or not isinstance(r.body, dict):
            endpoint = f"{getattr(self.caller, 'endpoint', 'the API server')}{path}"
            raise SourceUnavailable(endpoint, f"HTTP {r.status}: {r.message}",
                                    "give the kubeconfig's identity list on nodes, pods and resourcequotas in all "
                                    "namespaces (the control plane's admin.kubeconfig has it)")
        return list(r.body.get("items") or [])


@dataclass
class Renderer:
    """The two exporters' text, from one reader; GPU holders and energy persist between scrapes."""

    reader: ClusterReader
    clock: Callable[[], float] = time.monotonic
    allocator: Allocator = field(default_factory=Allocator)
    meter: EnergyMeter = field(default_factory=EnergyMeter)
    _labels: dict = field(default_factory=dict)
    _pods: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def dcgm(self) -> str:
        with self._lock:
            snap = self.reader.snapshot()
            cards, telemetry = cluster_cards(snap.nodes, snap.pods, self.allocator, snap.slices)
            self.meter.advance(cards, telemetry, self.clock())
            return dcgm_exposition(cards, telemetry, self._labels).render()

    def kube_state(self) -> str:
        with self._lock:
            snap = self.reader.snapshot()
            return render_kube_state(snap.pods, snap.nodes, snap.quotas, self._pods)

    def render(self, path: str) -> str | None:
        """The text of ``path``; None for an unknown path."""
        return {DCGM_PATH: self.dcgm, KUBE_STATE_PATH: self.kube_state}.get(path, lambda: None)()


def _handler(renderer: Renderer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            path = self.path.split("?", 1)[0].rstrip("/") or "/"
            if path == "/healthz":
                return self._send(200, "ok\n")
            try:
                text = renderer.render(path)
            except GpupocError as exc:
                return self._send(503, f"{exc}\n")
            except ValueError as exc:  # an object the series cannot be read from
                return self._send(500, f"{path}: {exc}\n")
            if text is None:
                return self._send(404, f"{path}: not served; try {DCGM_PATH} or {KUBE_STATE_PATH}\n")
            self._send(200, text)

        def _send(self, status: int, text: str) -> None:
            body = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    return Handler


@dataclass
class Exporter:
    """A running exporter; ``stop()`` closes its port and ends its thread."""

    url: str
    renderer: Renderer
    _server: ThreadingHTTPServer
    _thread: threading.Thread

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def current_context(kubeconfig: Path) -> str:
    """The kubeconfig's current context, named for the error messages."""
    try:
        doc = yaml.safe_load(Path(kubeconfig).read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise SourceUnavailable(f"kubeconfig {kubeconfig}", f"cannot read it: {exc}",
                                "start the control plane first (`gpupoc controlplane up`), or pass --kubeconfig a "
                                "readable kubeconfig") from exc
    if not doc.get("current-context"):
        raise SourceUnavailable(f"kubeconfig {kubeconfig}", "no current-context", "pass --context NAME")
    return str(doc["current-context"])


def start_exporter(kubeconfig: Path, port: int = 0, *, context: str | None = None,
                   clock: Callable[[], float] = time.monotonic) -> Exporter:
    """Serve the exporters on 127.0.0.1:``port`` (0: a free one) from the cluster of ``kubeconfig``; lists once
    first, so a wrong kubeconfig fails here with its endpoint and fix."""
    caller = ClientFactory(kubeconfig=str(kubeconfig)).caller(context or current_context(kubeconfig))
    renderer = Renderer(ClusterReader(caller, clock), clock)
    renderer.reader.snapshot()
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(renderer))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="gpupoc-exporter", daemon=True)
    thread.start()
    return Exporter(f"http://127.0.0.1:{server.server_address[1]}", renderer, server, thread)


def main(argv: list[str] | None = None) -> int:
    """``python -m gpupoc.controlplane.exporter --kubeconfig K [--port P] [--state FILE]``: serve until SIGTERM;
    the state file (pid and URL) is written once serving and removed at the end."""
    p = argparse.ArgumentParser(prog="gpupoc-exporter", description=__doc__.split("\n\n")[0])
    p.add_argument("--kubeconfig", type=Path, required=True)
    p.add_argument("--context")
    p.add_argument("--port", type=int, default=0, help="0: a free port")
    p.add_argument("--state", type=Path, help="write {pid, url} here once serving")
    args = p.parse_args(argv)
    try:
        exporter = start_exporter(args.kubeconfig, args.port, context=args.context)
    except GpupocError as exc:
        print(f"gpupoc-exporter: {exc}", flush=True)
        return 2
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    if args.state:
        tmp = args.state.with_suffix(".tmp")
        tmp.write_text(json.dumps({"pid": os.getpid(), "url": exporter.url}))
        tmp.replace(args.state)
    print(f"gpupoc-exporter: serving {exporter.url}{DCGM_PATH} and {exporter.url}{KUBE_STATE_PATH}", flush=True)
    while not done.wait(1.0):
        pass
    exporter.stop()
    if args.state:
        args.state.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
