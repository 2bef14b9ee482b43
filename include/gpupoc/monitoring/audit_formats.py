"""What an audit ``command`` source prints, turned into audit.k8s.io/v1 ``Event`` dicts.

- ``audit-events``: Events as JSON lines, a JSON array, or an ``EventList`` (kube-apiserver's log file, the
  webhook receiver's record, ``kubectl``-side exports).
- ``eks``: ``aws logs filter-log-events --output json`` over the ``kube-apiserver-audit-*`` streams of
  ``/aws/eks/<cluster>/cluster``: ``{"events": [{"message": "<Event JSON>", ...}]}`` (pages as JSON lines too).
- ``aks``: ``az monitor log-analytics query`` rows: ``AzureDiagnostics`` rows (category ``kube-audit`` or
  ``kube-audit-admin``) carry the Event JSON in ``log_s``; resource-specific ``AKSAudit`` / ``AKSAuditAdmin``
  rows carry its fields as columns (``AuditId``, ``Verb``, ``User``, ``ObjectRef``, ``ResponseStatus``, ...).
- ``gke``: ``gcloud logging read --format=json`` ``LogEntry`` records of Cloud Audit Logs (``protoPayload``, an
  ``AuditLog``, ``serviceName`` ``k8s.io``). These are not Events; ``gke_event`` maps them:

  =========================================  ====================================================
  audit.k8s.io/v1 Event                      GKE LogEntry
  =========================================  ====================================================
  auditID                                    operation.id, else insertId
  verb                                       last dot-part of protoPayload.methodName
                                             (``io.k8s.core.v1.pods.create`` -> ``create``)
  objectRef {apiGroup, apiVersion,           protoPayload.resourceName
  namespace, resource, name, subresource}    (``core/v1/namespaces/<ns>/pods/<name>[/<sub>]``; ``core`` is "")
  requestURI                                 "/" + resourceName (the query string is not kept)
  user.username                              protoPayload.authenticationInfo.principalEmail
  sourceIPs, userAgent                       protoPayload.requestMetadata.callerIp / callerSuppliedUserAgent
  responseStatus.code                        protoPayload.status.code (google.rpc.Code) -> HTTP
                                             (0 -> 200/201, 7 -> 403, 16 -> 401, 5 -> 404, 6/10 -> 409, ...)
  annotations authorization.k8s.io/decision  labels, else authorizationInfo[].granted (allow / forbid)
  requestReceivedTimestamp, stageTimestamp   timestamp (receiveTimestamp when absent)
  requestObject / responseObject             protoPayload.request / response
  stage, level                               ResponseComplete; RequestResponse when request or
                                             response is there, else Metadata
  =========================================  ====================================================

  Lost on the way: groups, impersonation, the query string and the exact HTTP code of a success.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable

FORMATS = ("audit-events", "eks", "gke", "aks")
# google.rpc.Code -> HTTP status (googleapis/google/rpc/code.proto gives each code's HTTP mapping)
RPC_TO_HTTP = {0: 200, 1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 11: 400,
               12: 501, 13: 500, 14: 503, 15: 500, 16: 401}
_AKS_COLUMNS = {"AuditId": "auditID", "Level": "level", "Stage": "stage", "RequestUri": "requestURI", "Verb": "verb",
                "User": "user", "ImpersonatedUser": "impersonatedUser", "SourceIps": "sourceIPs",
                "UserAgent": "userAgent", "ObjectRef": "objectRef", "ResponseStatus": "responseStatus",
                "RequestObject": "requestObject", "ResponseObject": "responseObject",
                "RequestReceivedTime": "requestReceivedTimestamp", "StageReceivedTime": "stageTimestamp",
                "Annotations": "annotations"}


class FormatError(ValueError):
    """The command's output is not in the format the plan names."""


def to_events(text: str, fmt: str) -> list[dict]:
    """The audit Events in ``text``, which is in format ``fmt`` (one of ``FORMATS``)."""
    if fmt not in FORMATS:
        raise FormatError(f"unknown audit format {fmt!r}; one of {', '.join(FORMATS)}")
    docs = list(_documents(text))
    convert: Callable[[Any], Iterable[dict]] = {"audit-events": _events_of, "eks": _eks_events,
                                                "aks": _aks_events, "gke": _gke_events}[fmt]
    return [ev for doc in docs for ev in convert(doc)]


def _documents(text: str) -> Iterable[Any]:
    """One JSON document, or JSON lines."""
    stripped = text.strip()
    if not stripped:
        return []
    try:
        return [json.loads(stripped)]
    except ValueError:
        pass
    out = []
    for i, line in enumerate(stripped.splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError as exc:
                raise FormatError(f"line {i} is not JSON ({exc.msg}): {line[:120]!r}") from None
    return out


def _is_event(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("kind", "Event") == "Event" and "verb" in doc


def _events_of(doc: Any) -> list[dict]:
    if isinstance(doc, list):
        return [e for d in doc for e in _events_of(d)]
    if isinstance(doc, dict) and doc.get("kind") == "EventList":
        return [e for e in doc.get("items") or [] if _is_event(e)]
    if _is_event(doc):
        return [doc]
    raise FormatError(f"not an audit.k8s.io Event or EventList: {json.dumps(doc)[:160]}")


def _eks_events(doc: Any) -> list[dict]:
    """``aws logs filter-log-events`` output: each event's ``message`` is one audit Event as JSON."""
    if isinstance(doc, dict) and "events" in doc:
        out = []
        for e in doc.get("events") or []:
            try:
                out += _events_of(json.loads(e.get("message") or ""))
            except ValueError:
                continue  # a stream line that is not an Event (e.g. a truncated message)
        return out
    return _events_of(doc)


def _aks_events(doc: Any) -> list[dict]:
    if isinstance(doc, list):
        return [e for row in doc for e in _aks_events(row)]
    if not isinstance(doc, dict):
        raise FormatError(f"not a Log Analytics row: {json.dumps(doc)[:160]}")
    if "log_s" in doc:
        return _events_of(json.loads(doc["log_s"]))
    if "AuditId" in doc:
        ev = {"kind": "Event", "apiVersion": "audit.k8s.io/v1"}
        for col, field in _AKS_COLUMNS.items():
            value = doc.get(col)
            if isinstance(value, str) and value[:1] in "{[":  # dynamic columns come back as JSON text
                value = json.loads(value)
            if value not in (None, ""):
                ev[field] = value
        return [ev]
    return _events_of(doc)


def _gke_events(doc: Any) -> list[dict]:
    if isinstance(doc, list):
        return [e for d in doc for e in _gke_events(d)]
    if isinstance(doc, dict) and isinstance(doc.get("protoPayload"), dict):
        return [gke_event(doc)]
    raise FormatError(f"not a Cloud Logging LogEntry with a protoPayload: {json.dumps(doc)[:160]}")


def object_ref(resource_name: str) -> dict:
    """``core/v1/namespaces/ns/pods/name/log`` -> objectRef (the layouts GKE writes)."""
    parts = [p for p in resource_name.split("/") if p]
    if len(parts) < 3:
        return {}
    ref = {"apiGroup": "" if parts[0] == "core" else parts[0], "apiVersion": parts[1]}
    rest = parts[2:]
    if rest[0] == "namespaces" and len(rest) >= 3:
        ref["namespace"], rest = rest[1], rest[2:]
    for key, value in zip(("resource", "name", "subresource"), rest):
        ref[key] = value
    return {k: v for k, v in ref.items() if v or k == "apiGroup"}


def gke_event(entry: dict) -> dict:
    """One GKE audit ``LogEntry`` as an audit.k8s.io/v1 Event (the mapping in the module docstring)."""
    p = entry["protoPayload"]
    verb = (p.get("methodName") or "").rsplit(".", 1)[-1]
    code = RPC_TO_HTTP.get(int((p.get("status") or {}).get("code") or 0), 500)
    if code == 200 and verb == "create":
        code = 201
    labels = entry.get("labels") or {}
    granted = [a.get("granted") for a in p.get("authorizationInfo") or [] if "granted" in a]
    decision = labels.get("authorization.k8s.io/decision") or (
        ("allow" if all(granted) else "forbid") if granted else "")
    at = entry.get("timestamp") or entry.get("receiveTimestamp") or ""
    meta = p.get("requestMetadata") or {}
    ev: dict = {"kind": "Event", "apiVersion": "audit.k8s.io/v1",
                "level": "RequestResponse" if p.get("request") or p.get("response") else "Metadata",
                "auditID": (entry.get("operation") or {}).get("id") or entry.get("insertId", ""),
                "stage": "ResponseComplete", "requestURI": "/" + (p.get("resourceName") or ""), "verb": verb,
                "user": {"username": (p.get("authenticationInfo") or {}).get("principalEmail", "")},
                "sourceIPs": [meta["callerIp"]] if meta.get("callerIp") else [],
                "userAgent": meta.get("callerSuppliedUserAgent", ""),
                "objectRef": object_ref(p.get("resourceName") or ""),
                "responseStatus": {"metadata": {}, "code": code},
                "requestReceivedTimestamp": at, "stageTimestamp": at}
    if (p.get("status") or {}).get("message"):
        ev["responseStatus"]["message"] = p["status"]["message"]
    for src, dst in (("request", "requestObject"), ("response", "responseObject")):
        if p.get(src):
            ev[dst] = {k: v for k, v in p[src].items() if k != "@type"}
    annotations = {k: v for k, v in labels.items() if k.startswith("authorization.k8s.io/")}
    if decision:
        annotations["authorization.k8s.io/decision"] = decision
    if annotations:
        ev["annotations"] = annotations
    return ev
