"""The API server's proxy to Services and pods: ``.../services/{[scheme:]name[:port]}/proxy/{path}`` and
``.../pods/{name[:port]}/proxy/{path}``.

As kube-apiserver's (kubernetes ``pkg/registry/core/service/storage/rest.go`` ``ResourceLocation``,
``pkg/registry/core/pod/strategy.go`` ``ResourceLocation``): a Service's port is named or numbered (its only
port when omitted); the request goes to one ready endpoint of its EndpointSlices, chosen at random, on the
endpoint's port of that name; none ready answers 503 "no endpoints available for service \"name\"". A pod is
reached at its IP on the given port (80 when omitted). The caller's Authorization header is not forwarded.
The pod address is reached on this host as ``sim/pod_network.py`` says.
"""

from __future__ import annotations

import random

import aiohttp
from aiohttp import web

from gpupoc.sim.api.context import Ctx
from gpupoc.sim.api.registry import ResourceSpec
from gpupoc.sim.api.status import StatusError, bad_request, not_found
from gpupoc.sim.controllers.endpointslices import ready_endpoints, unreachable
from gpupoc.sim.pod_network import host_address

HOP_HEADERS = frozenset({"authorization", "host", "connection", "keep-alive", "transfer-encoding", "upgrade",
                         "proxy-authorization", "te", "trailer", "content-length"})
TIMEOUT_SECONDS = 30.0


def split_name(name: str) -> tuple[str, str, str]:
    """``[scheme:]name[:port]`` -> (scheme, name, port)."""
    parts = name.split(":")
    if len(parts) == 1:
        return "", parts[0], ""
    if len(parts) == 2:
        return "", parts[0], parts[1]
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    raise bad_request(f"invalid request {name!r}")


def _unavailable(message: str) -> StatusError:
    return StatusError(503, message, "ServiceUnavailable")


def service_target(ctx: Ctx, name: str, port: str) -> tuple[str, int]:
    state, ns = ctx.state, ctx.info.namespace
    svc = state.store.get("services", ns, name)
    if svc is None:
        raise StatusError(404, f'services "{name}" not found', "NotFound", {"name": name, "kind": "services"})
    ports = (svc.get("spec") or {}).get("ports") or []
    chosen = None
    for p in ports:
        if (port and (p.get("name") == port or str(p.get("port")) == port)) or (not port and len(ports) == 1):
            chosen = p
            break
    if chosen is None:
        raise _unavailable(f'no service port "{port}" found for service "{name}"')
    endpoints = ready_endpoints(state, ns, name, chosen.get("name") or "")
    if not endpoints:
        raise _unavailable(f'no endpoints available for service "{name}"')
    address, number, node = random.choice(endpoints)
    if unreachable(state, node):  # kube-apiserver's dial to a host that is gone
        raise _unavailable(f"error trying to reach service: dial tcp {address}:{number}: i/o timeout")
    return address, number


def pod_target(ctx: Ctx, spec: ResourceSpec, name: str, port: str) -> tuple[str, int]:
    pod = ctx.state.store.get("pods", ctx.info.namespace, name)
    if pod is None:
        raise not_found("pods", name, spec.group)
    ip = (pod.get("status") or {}).get("podIP")
    if not ip:
        raise bad_request(f'address not allowed: pod "{name}" has no IP yet')
    if unreachable(ctx.state, (pod.get("spec") or {}).get("nodeName")):
        raise _unavailable(f"error trying to reach service: dial tcp {ip}:{port or 80}: i/o timeout")
    if port and not port.isdigit():
        numbers = [cp["containerPort"] for c in pod["spec"].get("containers") or [] for cp in c.get("ports") or []
                   if cp.get("name") == port]
        if not numbers:
            raise _unavailable(f'no container port "{port}" in pod "{name}"')
        return ip, int(numbers[0])
    return ip, int(port or 80)


def _rest_of_path(ctx: Ctx) -> str:
    marker = f"/{ctx.info.resource}/{ctx.info.name}/proxy"
    path = ctx.request.path
    i = path.find(marker)
    return (path[i + len(marker):] if i >= 0 else "") or "/"


async def proxy(ctx: Ctx, spec: ResourceSpec) -> web.StreamResponse:
    """Forward the request to the Service's endpoint or the pod, answering with its response."""
    scheme, name, port = split_name(ctx.info.name)
    if spec.plural == "services":
        ip, number = service_target(ctx, name, port)
    else:
        ip, number = pod_target(ctx, spec, name, port)
    url = f"{scheme or 'http'}://{host_address(ip)}:{number}{_rest_of_path(ctx)}"
    if ctx.request.query_string:
        url += f"?{ctx.request.query_string}"
    headers = {k: v for k, v in ctx.request.headers.items() if k.lower() not in HOP_HEADERS}
    body = await ctx.request.read()
    try:
        timeout = aiohttp.ClientTimeout(total=TIMEOUT_SECONDS)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            async with session.request(ctx.request.method, url, headers=headers, data=body or None,
                                       allow_redirects=False) as resp:
                payload = await resp.read()
                out_headers = {k: v for k, v in resp.headers.items() if k.lower() not in HOP_HEADERS}
                return web.Response(status=resp.status, body=payload, headers=out_headers)
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise _unavailable(f"error trying to reach service: dial tcp {ip}:{number}: {exc}") from None
