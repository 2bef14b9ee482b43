"""The async Kubernetes client (``kubernetes_asyncio``) as the bulk submitter uses it: raw requests whose status,
headers and body are kept (never raised), and watch streams read line by line.

One client per identity: ``from_kubeconfig`` loads a kubeconfig context as the per-pod operator does (its
``config_file`` and ``cluster_context``), so each shard acts as its tenant. Tokens never reach messages.

A request's timeout counts from its connection: opening one (``CONNECT_TIMEOUT_SECONDS``) and each read of the
answer (``REQUEST_TIMEOUT_SECONDS``), not the wait for a free connection of the client's pool
(``connection_pool_maxsize``). Under a large burst most requests wait there first; a total timeout would end
them before they were even sent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, AsyncIterator

from gpupoc.common import fastjson
from gpupoc.exceptions import SourceUnavailable
from gpupoc.pipeline.bulk_rate import Answer
from gpupoc.pipeline.k8s import user_agent

REQUEST_TIMEOUT_SECONDS = 30.0
CONNECT_TIMEOUT_SECONDS = 10.0


def read_environment_once(rest: Any, host: str) -> None:
    """The proxy for ``host`` from the environment (``HTTPS_PROXY``, ``NO_PROXY``), read once, as kubectl reads
    it; after that the session reads nothing from the environment. ``kubernetes_asyncio`` opens its aiohttp
    session with ``trust_env``, which looks up the proxy and ``~/.netrc`` in a thread on every request: a fifth
    of the client's CPU when a release sends 1,000 patches. A proxy the configuration names is kept."""
    from aiohttp.helpers import get_env_proxy_for_url
    from yarl import URL

    if rest.proxy is None:
        try:
            proxy, auth = get_env_proxy_for_url(URL(host))
        except LookupError:  # no proxy for this host
            proxy, auth = None, None
        if proxy is not None:
            rest.proxy = str(proxy)
            if auth is not None:
                rest.proxy_headers = {**(rest.proxy_headers or {}), "Proxy-Authorization": auth.encode()}
    rest.pool_manager._trust_env = False  # no public setter; aiohttp reads it per request (client.py _request)


@dataclass
class AsyncKubeClient:
    """``AsyncKube`` over one ``kubernetes_asyncio.client.ApiClient`` (one identity)."""

    context: str
    api: Any  # kubernetes_asyncio.client.ApiClient

    @classmethod
    async def from_kubeconfig(cls, kubeconfig: str | None, context: str, component: str = "") -> "AsyncKubeClient":
        """The context's async client; with ``component`` its User-Agent names that gpupoc component, as the sync
        clients' do (``k8s.user_agent``), so the API server's metrics and audit log tell whose requests they are."""
        from kubernetes_asyncio import client, config

        cfg = client.Configuration()
        try:
            if context == "in-cluster" or not kubeconfig:
                config.load_incluster_config(client_configuration=cfg)
            else:
                await config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
        except Exception as exc:  # noqa: BLE001 - a broken kubeconfig is a clear error, never a traceback
            raise SourceUnavailable(f"kubeconfig {kubeconfig} (context {context})", type(exc).__name__,
                                    "check platform.kubeconfig and the tenant's kube_context in the plan") from None
        api = client.ApiClient(cfg)
        if component:
            api.user_agent = user_agent(component)
        read_environment_once(api.rest_client, cfg.host)
        return cls(context, api)

    async def close(self) -> None:
        await self.api.close()

    async def _call(self, method: str, path: str, query: list | None, body: Any, read_timeout: float | None,
                    content_type: str = "application/json", accept: str | None = None):
        import aiohttp

        # not aiohttp's ``total`` nor ``connect``: both include the wait for a connection of the pool
        timeout = aiohttp.ClientTimeout(total=None, connect=None, sock_connect=CONNECT_TIMEOUT_SECONDS,
                                        sock_read=read_timeout)
        headers = {"Accept": accept or "application/json, */*"}
        if body is not None:
            headers["Content-Type"] = content_type
        try:
            return await self.api.call_api(path, method, query_params=list(query or []), header_params=headers,
                                           body=body, auth_settings=["BearerToken"], _preload_content=False,
                                           _request_timeout=timeout)
        except (aiohttp.ClientConnectionError, OSError) as exc:
            raise SourceUnavailable(f"{self.api.configuration.host} (context {self.context})",
                                    f"API server unreachable: {type(exc).__name__}",
                                    "check that the cluster runs and the context points at it") from None

    async def request(self, method: str, path: str, query: list | None = None, body: Any = None,
                      content_type: str = "application/json", success_body: bool = True,
                      accept: str | None = None) -> Answer:
        """One request's answer; without ``success_body`` a success comes without its body (a release's patch
        needs only its status: 1,000 pods not parsed), a failure always with it. ``accept`` asks for another form
        of the answer (``k8s.METADATA_ONLY``: the object's metadata, which is also all the audit log keeps)."""
        resp = await self._call(method, path, query, body, REQUEST_TIMEOUT_SECONDS, content_type, accept)
        try:
            raw = await resp.read()
        finally:
            resp.release()
        if not success_body and 200 <= resp.status < 300:
            return Answer(resp.status, None, dict(resp.headers))
        text = raw.decode("utf-8", "replace")
        try:
            parsed = fastjson.loads(raw) if fastjson.looks_like_document(text) else {"_text": text}
        except ValueError:
            parsed = {"_text": text}
        return Answer(resp.status, parsed if isinstance(parsed, dict) else {"items": parsed}, dict(resp.headers))

    async def stream(self, path: str, query: list) -> AsyncIterator[dict]:
        """The watch events of one stream (an HTTP error as one ERROR event with its Status)."""
        resp = await self._call("GET", path, query, None, None)
        try:
            if resp.status != 200:
                body = await resp.read()
                try:
                    status = json.loads(body)
                except ValueError:
                    status = {"code": resp.status, "message": body.decode("utf-8", "replace")[:300]}
                yield {"type": "ERROR", "object": {**status, "code": status.get("code") or resp.status}}
                return
            async for line in resp.content:
                if line.strip():
                    yield fastjson.loads(line)
        finally:
            resp.release()
