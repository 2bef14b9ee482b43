"""kube-proxy for the simulated cluster: each Service's ClusterIP and port, forwarded to a ready endpoint.

As kube-proxy does (kubernetes ``pkg/proxy``, the userspace mode's round-robin replaced by a random ready
endpoint, as the iptables mode's probability rules pick one): for every Service with a ClusterIP and TCP
ports, the simulator listens on ``clusterIP:port`` (addresses of the loopback range, ``api/service_defaults.py``)
and forwards each connection to one ready endpoint of the Service's EndpointSlices, at the endpoint's pod
address on this host (``sim/pod_network.py``). A Service without a ready endpoint closes the connection (a
real node rejects it); an endpoint on a failed node is still picked while its slice says ready, and the
connection then hangs unanswered until the client gives up, as to a host that is gone. A port the simulator may not bind (below 1024 without the privilege) is logged once
and skipped: the API server's service proxy still reaches it. Pods see Services as ``{NAME}_SERVICE_HOST``
and ``{NAME}_SERVICE_PORT`` (``pod_network.service_env``, set by the kubelet as ``enableServiceLinks`` does).
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass, field

from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers.endpointslices import ready_endpoints, unreachable
from gpupoc.sim.pod_network import host_address

log = logging.getLogger(__name__)

Listen = tuple[str, str, str, int]  # (namespace, service, clusterIP, port)
CHUNK = 65536
BLACK_HOLE_SECONDS = 30.0  # a connection to a lost host: the client's own timeout ends it first


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except RuntimeError:
            pass


async def _black_hole(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Read and drop until the client closes (or ``BLACK_HOLE_SECONDS``): nothing answers."""
    try:
        await asyncio.wait_for(_drain(reader), BLACK_HOLE_SECONDS)
    except (asyncio.TimeoutError, ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def _drain(reader: asyncio.StreamReader) -> None:
    while await reader.read(CHUNK):
        pass


@dataclass
class KubeProxy:
    """The listeners of every Service port, kept equal to the Services each pass."""

    state: ClusterState
    servers: dict[Listen, asyncio.AbstractServer] = field(default_factory=dict)
    refused: set[Listen] = field(default_factory=set)  # could not bind: logged once

    def wanted(self) -> dict[Listen, str]:
        out: dict[Listen, str] = {}
        for svc in self.state.store.list("services"):
            spec = svc.get("spec") or {}
            ip = spec.get("clusterIP")
            if not ip or ip == "None":
                continue
            for port in spec.get("ports") or []:
                if port.get("protocol", "TCP") == "TCP":
                    out[(svc["metadata"]["namespace"], svc["metadata"]["name"], ip, int(port["port"]))] = \
                        port.get("name") or ""
        return out

    async def run_pass(self) -> int:
        wanted = self.wanted()
        for key in [k for k in self.servers if k not in wanted]:
            self.servers.pop(key).close()
        opened = 0
        for key, port_name in wanted.items():
            if key in self.servers or key in self.refused:
                continue
            try:
                self.servers[key] = await asyncio.start_server(self._handler(key, port_name), key[2], key[3])
                opened += 1
            except OSError as exc:
                self.refused.add(key)
                log.warning("kube-proxy: cannot listen on %s:%d for service %s/%s: %s", key[2], key[3], key[0],
                            key[1], exc)
        return opened

    def _handler(self, key: Listen, port_name: str):
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            targets = ready_endpoints(self.state, key[0], key[1], port_name)
            if not targets:
                writer.close()
                return
            ip, port, node = random.choice(targets)
            if unreachable(self.state, node):
                await _black_hole(reader, writer)
                return
            try:
                up_reader, up_writer = await asyncio.open_connection(host_address(ip), port)
            except OSError:
                writer.close()
                return
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        return handle
