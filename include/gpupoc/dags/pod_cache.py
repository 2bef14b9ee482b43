"""One pod list per namespace and poll interval for all the wave's triggers in a triggerer.

``KubernetesPodTrigger`` reads its pod with a GET, on a new async client, at every poll: at 1,000 wave pods
that is 200 GETs a second (each with its TLS set-up) on 2 cores, and it grows with the wave. The wave's pods
carry the run's labels, so one LIST per namespace answers every trigger of the run: ``SharedPodHook.get_pod``
serves a pod from the newest list and lists again only when that list is older than the poll interval (or was
taken before the trigger started, so a pod created just before is never missed). A pod missing from a
fresh list answers 404, as a GET would. A list the API server refuses for now (429, 503, a 5xx with
Retry-After) is taken again under the project's retry policy (``gpupoc.common.api_retry``), as the provider's
own ``get_pod`` retries: a throttled answer never ends a trigger's wait. Everything else the operator's trigger
does (logs, events, deletes) is the provider's own hook.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

from airflow.providers.cncf.kubernetes.hooks.kubernetes import AsyncKubernetesHook
from kubernetes_asyncio import client as async_client
from kubernetes_asyncio.client.exceptions import ApiException

from gpupoc.common.api_retry import acall_retrying


@dataclass
class _Listing:
    """The newest pod list of one (identity, namespace, selector) and when it was taken."""

    pods: dict[str, Any] = field(default_factory=dict)
    taken: float = float("-inf")
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class PodLists:
    """Per triggerer process (one event loop): the shared listings and how many LISTs they cost."""

    listings: dict[tuple, _Listing] = {}
    lists_made = 0  # for benchmarks and tests

    @classmethod
    async def pod(cls, hook: AsyncKubernetesHook, key: tuple, namespace: str, selector: str, name: str,
                  max_age: float, not_before: float) -> Any:
        listing = cls.listings.setdefault(key, _Listing())
        async with listing.lock:
            now = time.time()
            if listing.taken < not_before or now - listing.taken >= max_age:
                result = await cls.list_pods(hook, namespace, selector)
                listing.pods = {p.metadata.name: p for p in result.items}
                listing.taken = now
                cls.lists_made += 1
        pod = listing.pods.get(name)
        if pod is None:
            raise ApiException(status=404, reason=f'pods "{name}" not found in a list of namespace {namespace} '
                                                  f"({selector}) taken after this trigger's last look")
        return pod


    sleep = staticmethod(asyncio.sleep)

    @classmethod
    async def list_pods(cls, hook: AsyncKubernetesHook, namespace: str, selector: str) -> Any:
        """The namespace's pods of the selector; a refusal for now is asked again as the retry policy says, and
        raises ``ApiGaveUp`` (naming the list and the fix) once the policy ran out."""
        async def list_once() -> Any:
            async with hook.get_conn() as conn:
                return await async_client.CoreV1Api(conn).list_namespaced_pod(namespace, label_selector=selector)

        return await acall_retrying(list_once, f"LIST /api/v1/namespaces/{namespace}/pods?labelSelector={selector}",
                                    sleep=cls.sleep)


class SharedPodHook(AsyncKubernetesHook):
    """The provider's async hook, except that ``get_pod`` reads the run's shared pod list and every call of
    the triggers of one identity goes through one client (a new client per call costs a TLS set-up)."""

    clients: dict[tuple, Any] = {}

    def __init__(self, *args: Any, label_selector: str, max_age: float, started: float, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.label_selector = label_selector
        self.max_age = max_age
        self.started = started  # the trigger's start (epoch seconds): its pod existed by then

    def _identity(self, namespace: str) -> tuple:
        cfg = json.dumps(self.config_dict or {}, sort_keys=True, default=str)
        return (self.conn_id, self.cluster_context, hashlib.sha256(cfg.encode()).hexdigest(), namespace,
                self.label_selector)

    @contextlib.asynccontextmanager
    async def get_conn(self) -> AsyncIterator[Any]:
        users = (self.config_dict or {}).get("users") or []
        if any((u.get("user") or {}).get("exec") for u in users):  # short-lived tokens: a fresh client a call
            async with super().get_conn() as conn:
                yield conn
            return
        key = self._identity("")[:3]
        client = SharedPodHook.clients.get(key)
        if client is None:
            await self._load_config()
            client = SharedPodHook.clients[key] = async_client.ApiClient(configuration=self.client_configuration)
        yield client

    async def get_pod(self, name: str, namespace: str) -> Any:
        return await PodLists.pod(self, self._identity(namespace), namespace, self.label_selector, name,
                                  self.max_age, self.started)
