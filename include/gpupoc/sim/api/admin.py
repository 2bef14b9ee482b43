"""Simulator-only endpoints: node failure and kubelet stop injection (admin) and the unauthenticated /metrics pages."""

from __future__ import annotations

import importlib
import inspect

from aiohttp import web

from gpupoc.sim.api.context import Ctx, json_response
from gpupoc.sim.api.registry import ResourceSpec
from gpupoc.sim.api.status import StatusError, not_found
from gpupoc.sim.cluster import ClusterState

METRICS_PATHS = ("/metrics", "/metrics/kube-state")  # dcgm-exporter's, kube-state-metrics' page


NODE_ACTIONS = {"fail": ("nodes", "fail_node"), "recover": ("nodes", "recover_node"),
                "stop-kubelet": ("node_lifecycle", "stop_kubelet"),
                "start-kubelet": ("node_lifecycle", "start_kubelet")}


async def node_action(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    """``POST /apis/sim.gpupoc.io/v1/nodes/{name}/fail|recover|stop-kubelet|start-kubelet``: the nodes and node
    lifecycle controllers do the work."""
    name, action = ctx.info.name, ctx.info.subresource
    if ctx.state.store.get("nodes", None, name) is None:
        raise not_found("nodes", name)
    module, func = NODE_ACTIONS.get(action, ("", ""))
    try:
        controller = importlib.import_module(f"gpupoc.sim.controllers.{module}") if module else None
    except ImportError:
        controller = None
    fn = getattr(controller, func, None)
    if fn is None:
        raise StatusError(503, f"node {action} is not available: the {module or 'nodes'} controller is not "
                          "installed", "ServiceUnavailable")
    result = fn(ctx.state, name)
    if inspect.isawaitable(result):
        await result
    ctx.state.kick()
    return json_response(ctx.state.store.get("nodes", None, name))


async def metrics(request: web.Request, state: ClusterState, path: str) -> web.Response:
    """Prometheus text from gpupoc.sim.metrics (dcgm-exporter) or gpupoc.sim.kube_state (kube-state-metrics)."""
    from gpupoc.sim import kube_state, metrics as dcgm

    text = (dcgm.render_dcgm if path == METRICS_PATHS[0] else kube_state.render_kube_state)(state)
    if inspect.isawaitable(text):
        text = await text
    return web.Response(body=text.encode(), headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})
