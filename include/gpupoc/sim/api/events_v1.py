"""``events.k8s.io/v1`` Events: the stored core Events read through the API server's conversion
(``regarding`` from ``involvedObject``, ``note`` from ``message``, ``reportingController`` from
``reportingComponent``, the old counters as ``deprecated*``), with their field selectors (``regarding.name``).
Read only (get, list): the cluster's components write core Events."""

from __future__ import annotations

from aiohttp import web

from gpupoc.sim.api.context import Ctx, json_response
from gpupoc.sim.api.registry import ResourceSpec, lookup
from gpupoc.sim.api.resources import matching, paginate
from gpupoc.sim.api.status import bad_request, not_found
from gpupoc.sim.selectors import Selector, SelectorError

GROUP = "events.k8s.io"
# an events.k8s.io/v1 field selector's keys, as the core Event's
FIELDS = {"regarding.": "involvedObject.", "reportingController": "reportingComponent",
          "deprecatedSource": "source"}


def to_v1(core: dict) -> dict:
    """A core Event as events.k8s.io/v1 serves it."""
    out = {"kind": "Event", "apiVersion": f"{GROUP}/v1", "metadata": core.get("metadata") or {},
           "eventTime": core.get("eventTime"), "reportingController": core.get("reportingComponent") or "",
           "reportingInstance": core.get("reportingInstance") or "", "action": core.get("action"),
           "reason": core.get("reason"), "regarding": core.get("involvedObject") or {},
           "related": core.get("related"), "note": core.get("message"), "type": core.get("type"),
           "series": core.get("series"), "deprecatedSource": core.get("source"),
           "deprecatedFirstTimestamp": core.get("firstTimestamp"),
           "deprecatedLastTimestamp": core.get("lastTimestamp"), "deprecatedCount": core.get("count")}
    return {k: v for k, v in out.items() if v is not None}


def core_field_selector(text: str | None) -> str | None:
    """``regarding.name=x,type=Warning`` -> ``involvedObject.name=x,type=Warning``."""
    if not text:
        return text
    parts = []
    for part in text.split(","):
        for new, old in FIELDS.items():
            if part.startswith(new):
                part = old + part[len(new):]
                break
        parts.append(part)
    return ",".join(parts)


def _core() -> ResourceSpec:
    spec = lookup("", "v1", "events")
    assert spec is not None
    return spec


async def list_events(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    try:
        sel = Selector.parse("events", ctx.query.get("labelSelector"),
                             core_field_selector(ctx.query.get("fieldSelector")))
    except SelectorError as exc:
        raise bad_request(str(exc).replace("involvedObject.", "regarding.")) from None
    objs, meta = paginate(ctx, matching(ctx, _core(), sel), str(ctx.state.store.rv))
    return json_response({"kind": "EventList", "apiVersion": spec.group_version, "metadata": meta,
                          "items": [to_v1(o) for o in objs]})


async def get_event(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    obj = ctx.state.store.get("events", ctx.info.namespace, ctx.info.name)
    if obj is None:
        raise not_found("events", ctx.info.name, GROUP)
    return json_response(to_v1(obj))
