"""A Service's local proxy: the ready endpoints it picks from, and a connection relayed to a replica and back."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from gpupoc.controlplane.runner_services import ServiceProxy, ready_endpoints


def endpoint(pod: str, ready: bool) -> dict:
    return {"addresses": ["10.0.0.9"], "conditions": {"ready": ready}, "targetRef": {"kind": "Pod", "name": pod}}


def test_only_ready_endpoints_of_the_services_port_are_picked():
    slices = [{"ports": [{"name": "metrics", "port": 9090}, {"name": "http", "port": 8080}],
               "endpoints": [endpoint("b", True), endpoint("a", True), endpoint("c", False)]}]
    assert ready_endpoints(slices, "http") == [("a", 8080), ("b", 8080)]


def test_a_slice_without_endpoints_or_ports_gives_none():
    assert ready_endpoints([{"ports": [], "endpoints": [endpoint("a", True)]}, {"ports": None}], None) == []


class Hello(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        body = self.server.name.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Ports:
    """Stands in for the port-forwards: the replica's name -> a local server's port."""

    def __init__(self, servers: dict[str, ThreadingHTTPServer]) -> None:
        self.servers = servers

    def local_port(self, namespace: str, pod: str, port: int) -> int:
        return self.servers[pod].server_address[1]


@pytest.fixture
def replicas():
    servers = {}
    for name in ("a", "b"):
        s = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
        s.name = name
        threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers[name] = s
    yield servers
    for s in servers.values():
        s.shutdown()
        s.server_close()


def get(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
        return r.read().decode()


def test_connections_go_round_robin_to_the_ready_replicas(replicas):
    proxy = ServiceProxy("ns", "svc", lambda ns, svc: [("a", 80), ("b", 80)], Ports(replicas), lambda _: None)
    try:
        assert sorted(get(proxy.port) for _ in range(4)) == ["a", "a", "b", "b"]
    finally:
        proxy.close()


def test_with_no_ready_replica_a_connection_is_closed_unanswered(replicas):
    proxy = ServiceProxy("ns", "svc", lambda ns, svc: [], Ports(replicas), lambda _: None)
    try:
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            get(proxy.port)
    finally:
        proxy.close()
