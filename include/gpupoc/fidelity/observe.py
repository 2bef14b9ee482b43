"""What a client reads from an answer, a pod or an object's events, recorded into a step's observations."""

from __future__ import annotations

from collections.abc import Iterable

from gpupoc.fidelity.client import Answer, Kube
from gpupoc.fidelity.model import StepRecord
from gpupoc.fidelity.normalise import present, shape

STATUS_FIELDS = ("kind", "apiVersion", "status", "message", "reason", "code", "details", "details.name",
                 "details.kind", "details.group", "metadata")


def _st(obj: dict) -> dict:
    """An object's status (empty for a ``Status`` answer, whose ``status`` is a string)."""
    st = obj.get("status")
    return st if isinstance(st, dict) else {}


def status(rec: StepRecord, prefix: str, answer: Answer, nodes: Iterable[str] = ()) -> None:
    """An answer's code; for a refusal, its ``Status``: reason, message shape and the fields it carries."""
    rec.see(f"{prefix}.code", answer.code)
    if answer.ok:
        return
    body = answer.body
    rec.see(f"{prefix}.reason", body.get("reason"))
    rec.see(f"{prefix}.message", shape(body.get("message"), nodes))
    rec.see(f"{prefix}.fields", present(body, STATUS_FIELDS))
    details = body.get("details") or {}
    rec.see(f"{prefix}.details", {k: details.get(k) for k in ("name", "kind", "group") if k in details})


def conditions(rec: StepRecord, prefix: str, obj: dict, types: Iterable[str] | None = None,
               nodes: Iterable[str] = ()) -> None:
    """Each condition (of ``types``, or all): status, reason and message shape."""
    conds = {c.get("type"): c for c in _st(obj).get("conditions") or []}
    wanted = list(types) if types is not None else sorted(conds)
    for name in wanted:
        cond = conds.get(name)
        if cond is None:
            rec.see(f"{prefix}.condition.{name}", None)
            continue
        rec.see(f"{prefix}.condition.{name}", f"{cond.get('status')} {cond.get('reason') or '-'}")
        rec.see(f"{prefix}.condition.{name}.message", shape(cond.get("message"), nodes))


def container(rec: StepRecord, prefix: str, pod: dict) -> None:
    """The first container's state: which state, its reason and exit code, and the pod's phase."""
    rec.see(f"{prefix}.phase", _st(pod).get("phase"))
    statuses = _st(pod).get("containerStatuses") or []
    if not statuses:
        rec.see(f"{prefix}.container", None)
        return
    state = statuses[0].get("state") or {}
    kind = next(iter(state), None)
    detail = state.get(kind) or {} if kind else {}
    rec.see(f"{prefix}.container.state", kind)
    rec.see(f"{prefix}.container.reason", detail.get("reason"))
    if kind == "terminated":
        rec.see(f"{prefix}.container.exitCode", detail.get("exitCode"))
        rec.see(f"{prefix}.container.fields", present(detail, ("startedAt", "finishedAt", "containerID",
                                                               "message", "signal")))


# what plays the kubelet: a real kubelet, the simulated one, or KWOK's controller (no containers, no images)
NODE_AGENTS = ("kubelet", "kwok_controller")


def _by(event: dict) -> str:
    return str(event.get("reportingController") or event.get("reportingComponent")
               or (event.get("deprecatedSource") or event.get("source") or {}).get("component") or "")


def events(rec: StepRecord, prefix: str, kube: Kube, namespace: str, name: str, reasons: Iterable[str] = (),
           nodes: Iterable[str] = ()) -> set[str]:
    """An object's events, core and events.k8s.io/v1: the reasons each API lists, the control plane's apart
    from the node agent's; for each of ``reasons`` the events.k8s.io/v1 event's type and action, message shape
    and reporting component. Returns the reasons both APIs list."""
    core = kube.get(f"/api/v1/namespaces/{namespace}/events",
                    fieldSelector=f"involvedObject.name={name}").body.get("items") or []
    new = kube.get(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
                   fieldSelector=f"regarding.name={name}").body.get("items") or []
    for api, items in (("core", core), ("v1", new)):
        rec.see(f"{prefix}.events.{api}", {e.get("reason") for e in items if _by(e) not in NODE_AGENTS})
        rec.see(f"{prefix}.events.{api}.node_agent", {e.get("reason") for e in items if _by(e) in NODE_AGENTS})
    by_reason = {e.get("reason"): e for e in new}
    for reason in reasons:
        event = by_reason.get(reason)
        if event is None:
            rec.see(f"{prefix}.event.{reason}", None)
            continue
        rec.see(f"{prefix}.event.{reason}", f"{event.get('type')} {event.get('action') or '-'}")
        rec.see(f"{prefix}.event.{reason}.note", shape(event.get("note"), nodes))
        rec.see(f"{prefix}.event.{reason}.by", event.get("reportingController"))
    return {e.get("reason") for e in core} & set(by_reason)
