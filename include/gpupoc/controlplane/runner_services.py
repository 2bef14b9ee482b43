"""A Service's traffic on the real control plane, without dialing a pod IP: the process runner gives each pod
``{SVC}_SERVICE_HOST``/``_PORT`` naming a local proxy of the Service (as kube-proxy answers a ClusterIP); the
proxy takes each connection to the next ready endpoint of the Service's EndpointSlices (kube-controller-manager
writes them) through a ``kubectl port-forward`` of that replica (the API server's ``pods/portforward``, kwok's
kubelet API, the pod's ``PortForward`` object, the replica's local process). One port-forward per ready
replica, started when first needed and stopped when the replica goes."""

from __future__ import annotations

import re
import socket
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from gpupoc.common.processes import die_with_parent

LOOPBACK = "127.0.0.1"
FORWARDING = re.compile(rb"Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)")
ENDPOINTS_TTL_SECONDS = 0.5
CONNECT_SECONDS = 5.0

# (namespace, service) -> [(pod name, target port)] of its ready endpoints
Endpoints = Callable[[str, str], list[tuple[str, int]]]


def ready_endpoints(slices: list[dict], port_name: str | None) -> list[tuple[str, int]]:
    """The ready endpoints of a Service's EndpointSlices: (pod name, port) for the Service's port ``port_name``
    (the slice's only port when it has no name), in a stable order."""
    out = []
    for s in slices:
        ports = [p for p in s.get("ports") or [] if p.get("name") in (port_name, None, "")] or (s.get("ports") or [])
        if not ports:
            continue
        for ep in s.get("endpoints") or []:
            ref = ep.get("targetRef") or {}
            if ref.get("kind") == "Pod" and (ep.get("conditions") or {}).get("ready"):
                out.append((ref["name"], int(ports[0]["port"])))
    return sorted(set(out))


@dataclass
class Forwarder:
    """``kubectl port-forward pod/NAME :PORT`` and the local port it listens on."""

    proc: subprocess.Popen
    local_port: int


@dataclass
class Forwarders:
    """One running port-forward per (namespace, pod, port), through the built kubectl."""

    kubectl: Path
    kubeconfig: Path
    running: dict[tuple[str, str, int], Forwarder] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    spawner: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1, "port-forward"))

    def local_port(self, namespace: str, pod: str, port: int) -> int:
        """The local port forwarding to the pod's ``port`` (started now when none runs)."""
        key = (namespace, pod, port)
        with self.lock:
            fw = self.running.get(key)
            if fw is not None and fw.proc.poll() is None:
                return fw.local_port
            fw = self._start(namespace, pod, port)
            self.running[key] = fw
            return fw.local_port

    def _start(self, namespace: str, pod: str, port: int) -> Forwarder:
        argv = [str(self.kubectl), f"--kubeconfig={self.kubeconfig}", "port-forward", "-n", namespace,
                "--address", LOOPBACK, f"pod/{pod}", f":{port}"]
        # started from one long-lived thread: a child's parent-death signal follows the thread that forked it
        proc = self.spawner.submit(subprocess.Popen, argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, preexec_fn=die_with_parent).result()
        seen = b""
        for line in iter(proc.stdout.readline, b""):
            m = FORWARDING.search(line)
            if m:
                threading.Thread(target=_drain, args=(proc.stdout,), daemon=True).start()
                return Forwarder(proc, int(m.group(1)))
            seen += line
        proc.wait()
        raise OSError(f"kubectl port-forward pod/{pod} -n {namespace} :{port} exited {proc.returncode}: "
                      f"{seen.decode(errors='replace').strip()[-300:]}")

    def keep(self, live: set[tuple[str, str]]) -> None:
        """Stop the port-forwards of pods no longer in ``live`` (namespace, pod)."""
        with self.lock:
            for key in [k for k in self.running if k[:2] not in live]:
                _stop(self.running.pop(key).proc)

    def stop(self) -> None:
        self.keep(set())
        self.spawner.shutdown()


def _drain(stream) -> None:
    for _ in iter(stream.readline, b""):
        pass


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class ServiceProxy:
    """A local listener for one Service: each connection goes to its next ready endpoint, round robin."""

    def __init__(self, namespace: str, service: str, endpoints: Endpoints, forwarders: Forwarders,
                 log: Callable[[str], None]) -> None:
        self.namespace, self.service = namespace, service
        self.endpoints, self.forwarders, self.log = endpoints, forwarders, log
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((LOOPBACK, 0))
        self.sock.listen(256)
        self.port = self.sock.getsockname()[1]
        self._next = 0
        self._cache: tuple[float, list[tuple[str, int]]] = (0.0, [])
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _ready(self) -> list[tuple[str, int]]:
        at, eps = self._cache
        if time.monotonic() - at > ENDPOINTS_TTL_SECONDS:
            eps = self.endpoints(self.namespace, self.service)
            self._cache = (time.monotonic(), eps)
        return eps

    def warm(self) -> None:
        """Start the port-forward of each ready replica before a connection needs it."""
        for pod, port in self._ready():
            try:
                self.forwarders.local_port(self.namespace, pod, port)
            except OSError as exc:
                self.log(f"service {self.namespace}/{self.service}: {exc}")

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        """Connect the client to a ready replica; with none (or its forward failing), close it unanswered, as a
        ClusterIP with no ready endpoint refuses."""
        try:
            eps = self._ready()
            if not eps:
                return client.close()
            pod, port = eps[self._next % len(eps)]
            self._next += 1
            local = self.forwarders.local_port(self.namespace, pod, port)
            upstream = socket.create_connection((LOOPBACK, local), timeout=CONNECT_SECONDS)
        except OSError as exc:
            self.log(f"service {self.namespace}/{self.service}: no connection to a replica: {exc}")
            return client.close()
        upstream.settimeout(None)
        for s in (client, upstream):  # small writes pass at once, as Go's sockets do (no Nagle delay)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
        back.start()
        _pipe(client, upstream)
        back.join()
        client.close()
        upstream.close()

    def close(self) -> None:
        self._closed = True
        self.sock.close()


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        # either side done: both end (a half-close makes kubectl port-forward drop its forward and exit)
        for s in (dst, src):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
