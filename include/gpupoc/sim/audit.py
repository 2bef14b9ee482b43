"""Kubernetes audit log: audit.k8s.io/v1 Event JSON lines, with a typical cluster's audit policy.

The ``audit-metadata`` behaviour profile writes every logged request at the Metadata level (no
requestObject / responseObject), as clusters with a metadata-only policy do.
"""

from __future__ import annotations

import copy
import uuid
from pathlib import Path

from pydantic import Field

from gpupoc.common.request_attributes import RequestAttributes
from gpupoc.common import fastjson
from gpupoc.sim import clock
from gpupoc.sim.ports import AuditSink

MUTATING = ("create", "update", "patch", "delete", "deletecollection")
REQUEST_RESPONSE = ("pods", "resourcequotas", "rolebindings", "roles", "clusterrolebindings")
READ_AUDITED = (("pods", "log"), ("pods", "exec"), ("pods", "attach"), ("secrets", ""))
REVIEWS = ("selfsubjectaccessreviews", "subjectaccessreviews", "selfsubjectrulesreviews", "localsubjectaccessreviews")


class AuditRecord(RequestAttributes):
    """What the server knows about one request when it completes: its attributes (the event's ``verb`` and
    ``objectRef``), who made it, and the answer."""

    request_uri: str
    user: dict
    source_ip: str
    user_agent: str
    received: str
    impersonated: dict | None = None
    api_version: str = "v1"
    code: int = 200
    status: dict | None = None  # the failure Status, if any
    decision: str | None = None  # allow / forbid
    reason: str = ""
    request_object: object = None
    response_object: object = None
    object_uid: str = ""  # the objectRef's uid: a binding's names the bound pod
    audit_id: str = Field(default_factory=lambda: str(uuid.uuid4()))


def level_for(rec: AuditRecord, audit_gaps: bool = False) -> str | None:
    """The policy: None (not logged), ``Metadata`` or ``RequestResponse``."""
    if rec.code in (401, 403):
        return "Metadata"
    if rec.resource == "secrets" or rec.resource in REVIEWS:
        return "Metadata"
    if (rec.resource, rec.subresource) in READ_AUDITED:
        return "Metadata"
    if rec.verb in MUTATING:
        if audit_gaps and rec.resource == "resourcequotas" and rec.verb in ("update", "patch"):
            return None
        if rec.resource in REQUEST_RESPONSE and not rec.subresource:
            return "RequestResponse"
        return "Metadata"
    return None


def event_for(rec: AuditRecord, level: str) -> dict:
    """The audit.k8s.io/v1 Event for a completed request."""
    ev: dict = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": level,
        "auditID": rec.audit_id,
        "stage": "ResponseComplete",
        "requestURI": rec.request_uri,
        "verb": rec.verb,
        "user": rec.user,
    }
    if rec.impersonated:
        ev["impersonatedUser"] = rec.impersonated
    ev["sourceIPs"] = [rec.source_ip]
    ev["userAgent"] = rec.user_agent
    if rec.resource:
        ref = {"resource": rec.resource}
        if rec.namespace:
            ref["namespace"] = rec.namespace
        if rec.name:
            ref["name"] = rec.name
        if rec.api_group:
            ref["apiGroup"] = rec.api_group
        ref["apiVersion"] = rec.api_version
        if rec.object_uid:
            ref["uid"] = rec.object_uid
        if rec.subresource:
            ref["subresource"] = rec.subresource
        ev["objectRef"] = ref
    status: dict = {"metadata": {}, "code": rec.code}
    if rec.status:
        status.update({k: rec.status[k] for k in ("status", "message", "reason") if k in rec.status})
    ev["responseStatus"] = status
    if level == "RequestResponse":
        if rec.request_object is not None:
            ev["requestObject"] = _scrub(rec.request_object)
        if rec.response_object is not None:
            ev["responseObject"] = _scrub(rec.response_object)
    ev["requestReceivedTimestamp"] = rec.received
    ev["stageTimestamp"] = clock.rfc3339_micro()
    if rec.decision:
        # the API server writes the reason beside every decision, empty for RBAC's denials
        ev["annotations"] = {"authorization.k8s.io/decision": rec.decision,
                             "authorization.k8s.io/reason": rec.reason}
    return ev


def _scrub(obj: object) -> object:
    """Never let Secret data reach the log."""
    if isinstance(obj, dict) and obj.get("kind") == "Secret":
        obj = copy.deepcopy(obj)
        obj.pop("data", None)
        obj.pop("stringData", None)
    return obj


class AuditLog:
    """Appends one JSON line per audited request to ``path`` (opened lazily, flushed per line) and hands each
    event to the ``sinks`` (other backends, e.g. ``audit_webhook.WebhookBackend``)."""

    def __init__(self, path: Path, audit_gaps: bool = False, metadata_only: bool = False):
        self.path = Path(path)
        self.audit_gaps = audit_gaps  # set by the ``audit-gaps`` profile (``fault_profiles``)
        self.metadata_only = metadata_only
        self.sinks: list[AuditSink] = []
        self._fh = None

    def record(self, rec: AuditRecord) -> dict | None:
        level = level_for(rec, self.audit_gaps)
        if level is None:
            return None
        if self.metadata_only:
            level = "Metadata"
        ev = event_for(rec, level)
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "ab")  # noqa: SIM115
        self._fh.write(fastjson.dumps(ev) + b"\n")
        self._fh.flush()
        for sink in self.sinks:
            sink(ev)
        return ev

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()
        if self._fh is not None:
            self._fh.close()
            self._fh = None
