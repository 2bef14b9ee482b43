"""Kubernetes clients per kubeconfig context, and a raw caller that keeps every status code and body.

The probes need the answer exactly as the API server gave it (403 bodies, 404s, quota messages), so
``KubeCaller.call`` never raises on an HTTP status: it returns a ``Response``. Only an unreachable cluster,
a rejected token or a broken kubeconfig raise ``SourceUnavailable`` with the endpoint and the fix.
``ApiCaller`` sends a throttled or briefly refused request again under the project's one retry policy
(``gpupoc.common.api_retry``): 429 and 503 always, another 5xx when it carries ``Retry-After``, waiting as the
header says or backing off; when the policy runs out it raises ``ApiGaveUp`` naming the endpoint and the fix
(a probe never reads a throttled answer as the platform's verdict).
Tokens are never put into messages or logs.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol
from urllib.parse import urlsplit

from gpupoc.common import fastjson
from gpupoc.common.api_retry import DEFAULT_POLICY, Backoff, RetryPolicy, policy_for
from gpupoc.common.request_attributes import RequestAttributes
from gpupoc.exceptions import SourceUnavailable

IN_CLUSTER = "in-cluster"


@dataclass(frozen=True)
class Response:
    """One API answer: HTTP status, the JSON body when there is one, else the text."""

    status: int
    body: Any = None
    text: str = ""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def message(self) -> str:
        """The Status message of a failure (what a user sees), else a short description of the success."""
        if isinstance(self.body, dict):
            if self.body.get("kind") == "Status" and self.body.get("message"):
                return str(self.body["message"])
            if not self.ok and self.body.get("message"):
                return str(self.body["message"])
            kind = self.body.get("kind", "")
            name = (self.body.get("metadata") or {}).get("name", "")
            if self.ok and "items" in self.body:
                return f"{self.status}: {kind or 'list'} with {len(self.body.get('items') or [])} item(s)"
            return f"{self.status}: {kind} {name}".strip()
        if self.ok:
            return f"{self.status}: {len(self.text)} characters of text"
        return self.text.strip()[:500] or f"HTTP {self.status}"


class KubeCaller(Protocol):
    """What the probes need from a client: one identity (``context``) making raw requests."""

    context: str

    def call(self, method: str, path: str, *, query: dict | list | None = None, body: Any = None,
             content_type: str | None = None, timeout: float | None = None) -> Response: ...


# the Accept of a request that needs only the items' metadata (a deletecollection's count of what it deleted):
# kube-apiserver answers, and its audit log keeps, each item's metadata instead of the whole object
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json"
# the same for one object: a creation or a patch whose answer the harness needs only the metadata of
METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json"


@dataclass(frozen=True)
class Actor:
    """Who a context authenticates as; ``username`` and ``groups`` go into SubjectAccessReviews."""

    context: str
    username: str
    groups: tuple[str, ...] = ()
    namespace: str | None = None


def service_account_groups(username: str) -> tuple[str, ...]:
    """The groups Kubernetes gives ``system:serviceaccount:<ns>:<name>``; empty for other users."""
    parts = username.split(":")
    if len(parts) == 4 and parts[:2] == ["system", "serviceaccount"]:
        return ("system:serviceaccounts", f"system:serviceaccounts:{parts[2]}", "system:authenticated")
    return ()


def whoami(caller: "KubeCaller", default: Actor | None = None) -> Actor:
    """The context's identity from a SelfSubjectReview (``kubectl auth whoami``), else ``default``.

    Audit matching needs the username the API server sees; a made-up one never matches.
    """
    r = caller.call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                    body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    info = ((r.body or {}).get("status") or {}).get("userInfo") if r.ok and isinstance(r.body, dict) else None
    if info and info.get("username"):
        ns = default.namespace if default else None
        return Actor(caller.context, info["username"], tuple(info.get("groups") or ()), ns)
    if default is None:
        raise SourceUnavailable(f"selfsubjectreviews (context {caller.context})", f"HTTP {r.status}: {r.message}",
                                "give the identity's username in the plan, or allow selfsubjectreviews (k8s >= 1.28)")
    return default


def service_account_actor(context: str, namespace: str, service_account: str) -> Actor:
    user = f"system:serviceaccount:{namespace}:{service_account}"
    return Actor(context, user, service_account_groups(user), namespace)


@dataclass
class ApiCaller:
    """``KubeCaller`` over a ``kubernetes.client.ApiClient`` (sync)."""

    context: str
    api_client: Any
    timeout: float = 20.0
    policy: RetryPolicy = DEFAULT_POLICY
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic

    @property
    def endpoint(self) -> str:
        return str(self.api_client.configuration.host)

    def call(self, method: str, path: str, *, query: dict | list | None = None, body: Any = None,
             content_type: str | None = None, timeout: float | None = None, accept: str | None = None) -> Response:
        backoff = Backoff(f"{method.upper()} {self.endpoint}{path} (context {self.context})",
                          policy_for(path, self.policy), self.clock)
        while True:
            status, data, headers = self._send(method, path, query, body, content_type, timeout, accept)
            text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data or "")
            wait = backoff.next_wait(status, headers, _status_message(text) if status == 429 or status >= 500 else "")
            if wait is None:
                break
            self.sleep(wait)
        if backoff.spent:
            raise backoff.error()
        if status == 401:
            raise SourceUnavailable(
                f"{self.endpoint} (context {self.context})",
                "401 Unauthorized: the API server rejected the context's credentials",
                f"renew the token of context {self.context!r} in the kubeconfig (or re-run `gpupoc sim serve`, "
                "which writes fresh tokens)")
        try:
            raw = data if isinstance(data, bytes) else text
            parsed = fastjson.loads(raw) if fastjson.looks_like_document(text) else None
        except ValueError:
            parsed = None
        return Response(status, parsed, text)

    def stream(self, path: str, query: list[tuple[str, str]], read_timeout_s: float, handle: Any) -> Any:
        """The events of one watch (``gpupoc.pipeline.watch_stream``); ``handle.close()`` ends it."""
        from gpupoc.pipeline.watch_stream import watch_events

        return watch_events(self.api_client, path, query, read_timeout_s, handle)

    def _send(self, method: str, path: str, query: dict | list | None, body: Any, content_type: str | None,
              timeout: float | None, accept: str | None = None) -> tuple[int, Any, Any]:
        """One request: (status, body bytes, headers)."""
        import urllib3
        from kubernetes.client.exceptions import ApiException

        params = list(query.items()) if isinstance(query, dict) else list(query or [])
        headers = {"Accept": accept or "application/json, */*"}
        if content_type:
            headers["Content-Type"] = content_type
        elif method.upper() == "PATCH":
            headers["Content-Type"] = "application/merge-patch+json"
        try:
            r = self.api_client.call_api(
                path, method.upper(), query_params=params, header_params=headers, body=body,
                auth_settings=["BearerToken"], _preload_content=False,
                _request_timeout=timeout or self.timeout)
            return r.status, r.data, r.headers
        except ApiException as e:
            if e.status == 0:
                raise self._unreachable(str(e.reason)) from None
            return e.status, e.body, e.headers
        except urllib3.exceptions.HTTPError as e:
            raise self._unreachable(type(e).__name__ + ": " + _strip_secrets(str(e))) from None

    def _unreachable(self, reason: str) -> SourceUnavailable:
        return SourceUnavailable(
            f"{self.endpoint} (context {self.context})", f"API server unreachable: {reason}",
            f"check that the cluster is running and that context {self.context!r} in the kubeconfig points at "
            "its address (for the simulated cluster: `gpupoc sim serve`, then use the kubeconfig it writes)")


def _status_message(text: str) -> str:
    """A Status answer's message (for an error naming the last refusal), else the text's start."""
    try:
        body = fastjson.loads(text) if fastjson.looks_like_document(text) else None
    except ValueError:
        body = None
    return str(body.get("message") or "") if isinstance(body, dict) else text.strip()[:200]


def _strip_secrets(text: str) -> str:
    """Drop anything that looks like an Authorization header from an error text."""
    import re

    return re.sub(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+", r"\1<redacted>", text)


@dataclass
class ClientFactory:
    """One ``ApiClient`` per kubeconfig context (cached); ``in-cluster`` uses the pod's service account.

    ``loader(context) -> ApiClient`` replaces the kubeconfig, e.g. ``KubernetesHook(conn_id).api_client`` for an
    Airflow connection per identity.
    """

    kubeconfig: str | None = None
    timeout: float = 20.0
    loader: Callable[[str], Any] | None = None
    _clients: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)

    def api_client(self, context: str, component: str = "") -> Any:
        """The context's client; with ``component`` one of its own whose User-Agent names the component
        (``gpupoc-observer/0.1.0``), so the API server's audit log tells the harness's parts apart (a client's
        default headers win over a request's, so a User-Agent needs a client of its own)."""
        key = (context, component)
        if key not in self._clients:
            client = self._load(context)
            if component:
                client.user_agent = user_agent(component)
            self._clients[key] = client
        return self._clients[key]

    def caller(self, context: str, component: str = "") -> ApiCaller:
        return ApiCaller(context, self.api_client(context, component), self.timeout)

    def __call__(self, context: str) -> ApiCaller:
        return self.caller(context)

    def close(self) -> None:
        for c in self._clients.values():
            try:
                c.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
        self._clients.clear()

    def _load(self, context: str) -> Any:
        if self.loader is not None:
            return self.loader(context)
        from kubernetes import client, config
        from kubernetes.config.config_exception import ConfigException

        if context == IN_CLUSTER:
            cfg = client.Configuration()
            try:
                config.load_incluster_config(client_configuration=cfg)
            except ConfigException as e:
                raise SourceUnavailable("in-cluster service account", str(e),
                                        "run inside a pod with a service account, or name a kubeconfig context")
            return client.ApiClient(cfg)
        path = self.kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
        path = path.split(os.pathsep)[0]
        if not os.path.exists(path):
            raise SourceUnavailable(f"kubeconfig {path}", "file not found",
                                    "set platform.kubeconfig in the plan or KUBECONFIG to an existing file")
        cfg = client.Configuration()
        try:
            config.load_kube_config(config_file=path, context=context, client_configuration=cfg,
                                    persist_config=False)
        except ConfigException as e:
            raise SourceUnavailable(f"kubeconfig {path}", f"context {context!r}: {_strip_secrets(str(e))}",
                                    f"use one of the contexts listed by `kubectl config get-contexts --kubeconfig "
                                    f"{path}`") from None
        cfg.retries = _urllib3_retries()
        return client.ApiClient(cfg)


CallerFactory = Callable[[str], KubeCaller]


def _urllib3_retries():
    """urllib3's retries under ``ApiCaller``: one more try after a dropped connection, never an answer retried
    (429/503 with ``Retry-After`` are ``ApiCaller``'s to wait for and count: urllib3 would wait and send again
    inside each of its sends)."""
    from urllib3.util.retry import Retry

    return Retry(total=1, respect_retry_after_header=False)


def user_agent(component: str) -> str:
    """The User-Agent of one gpupoc component: ``gpupoc-<component>/<version>``."""
    from gpupoc import __version__

    return f"gpupoc-{component}/{__version__}"


def server_version(caller: KubeCaller) -> dict:
    """``GET /version``; raises ``SourceUnavailable`` when the server does not answer it."""
    r = caller.call("GET", "/version")
    if not r.ok or not isinstance(r.body, dict):
        raise SourceUnavailable(f"/version (context {caller.context})", f"HTTP {r.status}: {r.message}",
                                "grant the context `get` on the /version non-resource URL (system:discovery)")
    return r.body


def host_of(caller: KubeCaller) -> str:
    """The API server's host:port (for evidence), '' when unknown."""
    endpoint = getattr(caller, "endpoint", "")
    return urlsplit(endpoint).netloc if endpoint else ""


def request_info(method: str, path: str, query: dict | list | None = None) -> RequestAttributes:
    """What the API server's request-info filter derives from a resource path: verb, resource, namespace,
    name, subresource, API group (as the audit log's ``verb`` and ``objectRef`` show them)."""
    params = dict(query.items() if isinstance(query, dict) else (query or []))
    parts = [p for p in urlsplit(path).path.split("/") if p]
    m = method.upper()
    if not parts or parts[0] not in ("api", "apis"):
        return RequestAttributes(verb=m.lower())
    rest = parts[2:] if parts[0] == "api" else parts[3:]
    group = "" if parts[0] == "api" else (parts[1] if len(parts) > 1 else "")
    namespace = ""
    if len(rest) >= 2 and rest[0] == "namespaces" and len(rest) > 2:
        namespace, rest = rest[1], rest[2:]
    elif len(rest) >= 2 and rest[0] == "namespaces":
        return RequestAttributes(verb=_verb(m, True, params), resource="namespaces", name=rest[1], api_group=group)
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""  # a proxy's path after it is not part of the subresource
    return RequestAttributes(verb=_verb(m, bool(name), params), resource=resource, namespace=namespace, name=name,
                             subresource=sub, api_group=group)


def _verb(method: str, named: bool, params: dict) -> str:
    watch = str(params.get("watch", "")).lower() in ("true", "1")
    if method == "GET":
        return "watch" if watch else ("get" if named else "list")
    if method == "DELETE":
        return "delete" if named else "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())


GPU_RESOURCE = "nvidia.com/gpu"
TERMINAL_PHASES = ("Succeeded", "Failed")


def pod_gpus(pod: dict) -> int:
    """GPUs a pod requests: the sum over containers (requests, else limits), or the largest init container."""
    def one(c: dict) -> int:
        res = c.get("resources") or {}
        v = (res.get("requests") or {}).get(GPU_RESOURCE, (res.get("limits") or {}).get(GPU_RESOURCE, 0))
        try:
            return int(str(v))
        except ValueError:
            return 0

    spec = pod.get("spec") or {}
    main = sum(one(c) for c in spec.get("containers") or [])
    init = max((one(c) for c in spec.get("initContainers") or []), default=0)
    return max(main, init)


def holds_gpus(pod: dict) -> bool:
    """True while Kubernetes counts the pod's GPUs as allocated: bound and not in a terminal phase."""
    bound = bool((pod.get("spec") or {}).get("nodeName"))
    return bound and (pod.get("status") or {}).get("phase") not in TERMINAL_PHASES
