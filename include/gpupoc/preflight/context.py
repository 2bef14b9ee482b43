"""What a preflight check may use: the plan, each identity's client, the evidence sources, a cache directory.

The same context serves ``gpupoc preflight`` (every check, every class) and a class DAG's first task (the
checks of that class, its own identities and images; ``test_class`` set).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

from gpupoc.common.api_retry import Backoff, RetryPolicy
from gpupoc.pipeline.k8s import ClientFactory, KubeCaller

# conn id -> True (exists), False (absent), None (no Airflow here to ask)
ConnectionLookup = Callable[[str], "bool | None"]
# a busy API server's 429 and 5xx answers, asked again a few times before concluding (the caller below it has
# already waited out every answer that said Retry-After)
STEADY_POLICY = RetryPolicy(attempts=4, base_s=0.4, max_total_s=15.0)


@dataclass
class SteadyCaller:
    """A caller that asks again, a few times, when the API server answers 429 or 5xx (with or without
    Retry-After), under the project's retry policy: the preflight must not call a verb missing because a busy
    server refused one review."""

    inner: Any
    policy: RetryPolicy = STEADY_POLICY
    sleep: Callable[[float], None] = time.sleep

    @property
    def context(self) -> str:
        return self.inner.context

    @property
    def endpoint(self) -> str:
        return getattr(self.inner, "endpoint", "")

    def call(self, method: str, path: str, **kw: Any):
        backoff = Backoff(f"{method} {path} (context {self.context})", self.policy)
        while True:
            r = self.inner.call(method, path, **kw)
            busy = r.status == 429 or r.status >= 500
            wait = backoff.next_wait(r.status, None, r.message, for_now=busy) if busy else None
            if wait is None:
                return r
            self.sleep(wait)


def airflow_lookup(conn_id: str) -> bool | None:
    """Whether Airflow knows the connection (its metadata database or an ``AIRFLOW_CONN_*`` variable); None
    when Airflow is not installed here."""
    import importlib.util

    if importlib.util.find_spec("airflow") is None:
        return None
    from gpupoc.monitoring.sources import airflow_connection

    return airflow_connection(conn_id) is not None


@dataclass
class PreflightContext:
    plan: Any
    factory: Any = None  # a ClientFactory (or anything with .caller(context))
    test_class: str | None = None  # None: every class (the CLI)
    pull_images: bool = True
    connection_exists: ConnectionLookup = airflow_lookup
    stack_dir: Path | None = None  # the local monitoring stack's state (None: gpupoc.monitoring.sources' default)
    use_airflow: bool = True  # resolve Prometheus/Alertmanager through Airflow connections, as the classes do
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.factory is None:
            kc = self.plan.kubeconfig_path
            self.factory = ClientFactory(str(kc) if kc else None,
                                         timeout=self.plan.cluster.preflight.api_timeout_seconds)

    # ---- identities ----
    @property
    def runner_context(self) -> str:
        return self.plan.platform.admin_context or "in-cluster"

    def caller(self, context: str) -> KubeCaller:
        return SteadyCaller(self.factory.caller(context))

    def runner(self) -> KubeCaller:
        return self.caller(self.runner_context)

    def tenant(self, name: str) -> KubeCaller:
        return self.caller(self.plan.tenant(name).kube_context)

    @property
    def tenants(self) -> list:
        """The tenants this preflight is about: all of them, or those the class submits as."""
        if self.test_class is None:
            return list(self.plan.tenants)
        from gpupoc.plan import class_items

        used = {i.tenant for i in class_items(self.plan, self.test_class)}
        return [t for t in self.plan.tenants if t.name in used] or list(self.plan.tenants)

    def about(self, classes: tuple[str, ...]) -> bool:
        """Whether a need or check of ``classes`` concerns this preflight."""
        return self.test_class is None or self.test_class in classes

    # ---- shared answers (one request per preflight) ----
    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def nodes(self) -> list[dict]:
        def fetch() -> list[dict]:
            r = self.runner().call("GET", "/api/v1/nodes")
            return (r.body or {}).get("items") or [] if r.ok else []
        return self.memo("nodes", fetch)

    def resource_slices(self) -> list[dict] | None:
        """The cluster's ResourceSlices (DRA devices); None when they cannot be listed."""
        from gpupoc.kube.dra import RESOURCE_SLICES

        def fetch() -> list[dict] | None:
            r = self.runner().call("GET", RESOURCE_SLICES)
            return ((r.body or {}).get("items") or []) if r.ok else None
        return self.memo("resourceslices", fetch)

    @cached_property
    def sources(self):
        """The monitoring locations (Airflow connections, plan, local stack), as the collectors resolve them."""
        from gpupoc.monitoring.sources import DEFAULT_STACK_DIR, resolve_sources

        return resolve_sources(plan_sources=self.plan.evidence_sources,
                               stack_dir=self.stack_dir or DEFAULT_STACK_DIR, use_airflow=self.use_airflow)

    @property
    def state_dir(self) -> Path:
        """Where the preflight remembers what it verified (images pulled), under the evidence root."""
        return self.plan.evidence_root_path / "preflight"

    @property
    def manifests_fix(self) -> str:
        return "apply the plan's manifests: gpupoc cluster manifests --plan PLAN | kubectl apply -f -"
