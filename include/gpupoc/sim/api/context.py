"""Per-request context: the parsed request info (RequestInfoFactory), the caller, and answer helpers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from pydantic import Field

from gpupoc.common.request_attributes import RequestAttributes
from gpupoc.common import fastjson
from gpupoc.sim.api.protobuf import decode_review
from gpupoc.sim.api.status import StatusError, bad_request
from gpupoc.sim.audit import AuditRecord
from gpupoc.sim.cluster import ClusterState

NAMESPACE_SUBRESOURCES = ("status", "finalize")


class RequestInfo(RequestAttributes):
    """Kubernetes' view of a request path: its attributes (verb, group, resource, namespace, name ...),
    whether it is a resource request, and the path's parts below the namespace."""

    path: str
    resource_request: bool = False
    api_prefix: str = ""
    api_version: str = ""
    parts: list[str] = Field(default_factory=list)


_METHOD_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "GET": "get", "HEAD": "get"}


def parse_request_info(method: str, path: str, query: dict[str, str]) -> RequestInfo:
    """Parse ``/api/v1/namespaces/ns/pods/name/log`` and friends the way the API server does."""
    parts = [p for p in path.strip("/").split("/") if p]
    lower = method.upper()
    info = RequestInfo(path=path, verb=_METHOD_VERBS.get(lower, "delete" if lower == "DELETE" else lower.lower()))
    if not parts or parts[0] not in ("api", "apis"):
        return info
    info.api_prefix = parts[0]
    rest = parts[1:]
    if parts[0] == "api":
        if len(rest) < 1:
            return info
        info.api_version, rest = rest[0], rest[1:]
    else:
        if len(rest) < 2:
            return info
        info.api_group, info.api_version, rest = rest[0], rest[1], rest[2:]
    if not rest:
        return info
    info.resource_request = True
    watch_prefix = rest[0] == "watch"
    if watch_prefix:
        rest = rest[1:]
        if not rest:
            info.resource_request = False
            return info
    if rest[0] == "namespaces":
        if len(rest) > 1:
            info.namespace = rest[1]
            if len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
                rest = rest[2:]
            else:
                info.resource, info.name = "namespaces", rest[1]
                info.subresource = rest[2] if len(rest) > 2 else ""
                rest = []
        else:
            info.resource = "namespaces"
            rest = []
    if rest:
        info.resource = rest[0]
        info.name = rest[1] if len(rest) > 1 else ""
        info.subresource = rest[2] if len(rest) > 2 else ""
    info.parts = rest
    if lower in ("GET", "HEAD"):
        if not info.name:
            info.verb = "list"
        if watch_prefix or truthy(query.get("watch")):
            info.verb = "watch"
    elif lower == "DELETE" and not info.name:
        info.verb = "deletecollection"
    return info


def truthy(value: str | None) -> bool:
    """Boolean query parameters arrive as ``true``/``True``/``1`` (kpo pitfall 4)."""
    return (value or "").strip().lower() in ("true", "1", "yes", "t")


def dry_run(query: Any) -> bool:
    """``?dryRun=All``: run every check, persist nothing."""
    return "All" in query.getall("dryRun", [])


def int_param(query: Any, name: str, default: int | None = None) -> int | None:
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise bad_request(f"{name}: invalid value {raw!r}: expected an integer") from None


@dataclass
class Caller:
    """The authenticated user, after impersonation."""

    username: str
    groups: tuple[str, ...]
    uid: str = ""
    namespace: str | None = None
    impersonated_by: dict | None = None
    extra: dict[str, list[str]] | None = None

    def as_user_info(self) -> dict:
        out = {"username": self.username}
        if self.uid:
            out["uid"] = self.uid
        out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


@dataclass
class Ctx:
    """Everything a handler needs about its request."""

    request: web.Request
    state: ClusterState
    info: RequestInfo
    audit: AuditRecord
    caller: Caller | None = None
    _body: Any = None
    _body_read: bool = False
    _raw: bytes = b""
    stream: web.StreamResponse | None = None  # set by streaming handlers before they prepare
    _protobuf: bool = False

    @property
    def query(self):
        return self.request.query

    async def body(self) -> Any:
        """The JSON body (``None`` when empty); 400 with the API's wording when unparseable."""
        if not self._body_read:
            raw = await self.request.read()
            self._body_read = True
            self._raw = raw
            if raw.strip():
                ct = self.request.headers.get("Content-Type", "")
                if "protobuf" in ct or "cbor" in ct:
                    self._protobuf = True
                    self._body = decode_review(raw) if "protobuf" in ct else None
                    if self._body is not None:  # a review kubectl sends in protobuf
                        return self._body
                    raise StatusError(415, f"the body of the request was in an unknown format - accepted media "
                                           f"types include: application/json, application/yaml (got {ct})",
                                      "UnsupportedMediaType")
                else:
                    try:
                        self._body = json.loads(raw)
                    except ValueError as exc:
                        raise bad_request(f"the body of the request was in an unknown format - accepted "
                                          f"media types include: application/json, application/yaml ({exc})") from None
        return self._body

    def answer_form(self) -> str:
        """The ``as=`` of the Accept's first media type that names one (``Table``, ``PartialObjectMetadata``,
        ``PartialObjectMetadataList``), else "": the form kube-apiserver's ``transformResponseObject`` answers."""
        for media in self.request.headers.get("Accept", "").split(","):
            for param in media.split(";")[1:]:
                key, _, value = param.strip().partition("=")
                if key == "as":
                    return value.strip()
        return ""

    def wants_table(self) -> bool:
        return self.answer_form() == "Table"

    def wants_metadata_list(self) -> bool:
        """A list (or the answer of a deletecollection) with each item's metadata only."""
        return self.answer_form() == "PartialObjectMetadataList"

    def wants_metadata(self) -> bool:
        """One object's metadata only (the answer of a get, a create, an update or a patch)."""
        return self.answer_form() == "PartialObjectMetadata"


def json_response(obj: Any, status: int = 200) -> web.Response:
    return web.Response(body=fastjson.dumps(obj), status=status,
                        content_type="application/json")


def error_response(exc: StatusError) -> web.Response:
    resp = json_response(exc.status, exc.code)
    if exc.retry_after is not None:
        resp.headers["Retry-After"] = str(exc.retry_after)
    return resp
