"""Kueue's visibility API: pending workloads of a ClusterQueue or a LocalQueue, with positions.

When the schedulers hide their reasons (``reactors.reasons_shown``: ``reasons-opaque``, ``vague-reasons``) it
is not served (as a Kueue without its VisibilityOnDemand
feature): 404, so no queue position explains a wait either."""

from __future__ import annotations

from aiohttp import web

from gpupoc.sim.api.context import Ctx, int_param, json_response
from gpupoc.sim.api.registry import KUEUE, VISIBILITY, ResourceSpec
from gpupoc.sim.api.status import StatusError, not_found

GROUP_VERSION = f"{VISIBILITY}/v1beta2"


def _pending(state, **kw) -> list[dict]:
    if not state.reactors.reasons_shown:
        raise StatusError(404, "the server could not find the requested resource", "NotFound")
    try:
        from gpupoc.sim.controllers import kueue
    except ImportError:
        kueue = None
    fn = getattr(kueue, "pending_workloads", None)
    if fn is None:
        raise StatusError(503, "the Kueue visibility API is not available: the Kueue controller is not running",
                          "ServiceUnavailable")
    return list(fn(state, **kw))


async def pending_workloads(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    """``GET .../clusterqueues/{cq}/pendingworkloads`` or ``.../namespaces/{ns}/localqueues/{lq}/pendingworkloads``."""
    store, info = ctx.state.store, ctx.info
    if spec.plural == "clusterqueues":
        if store.get("clusterqueues", None, info.name) is None:
            raise not_found("clusterqueues", info.name, KUEUE)
        items = _pending(ctx.state, cluster_queue=info.name)
    else:
        if store.get("localqueues", info.namespace, info.name) is None:
            raise not_found("localqueues", info.name, KUEUE)
        items = _pending(ctx.state, namespace=info.namespace, local_queue=info.name)
    offset = int_param(ctx.query, "offset", 0) or 0
    limit = int_param(ctx.query, "limit", 1000) or 1000
    return json_response({"kind": "PendingWorkloadsSummary", "apiVersion": GROUP_VERSION,
                          "metadata": {"creationTimestamp": None}, "items": items[offset: offset + limit]})
