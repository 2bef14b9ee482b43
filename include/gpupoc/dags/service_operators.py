"""The class's services through the cncf.kubernetes provider's own operators, as users deploy them.

- ``TenantCreateResourceOperator`` / ``TenantDeleteResourceOperator``: the provider's
  ``KubernetesCreateResourceOperator`` and ``KubernetesDeleteResourceOperator`` with the tenant's kubeconfig
  context (the provider's hook takes a context, the operators have no argument for it). A rerun finds its
  objects already created (409) or already gone (404) and counts that as done. Each write lands in the run's
  ledger as its tenant, so the audit class matches it against the platform's audit log.
- ``ServiceLoadOperator``: a ``KubernetesPodOperator`` running the service's load pod (``gpupoc/workload``
  ``load`` mode) as its tenant, its manifest built from the plan (``steps.services.load_pod``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import cached_property
from typing import Any

from airflow.providers.cncf.kubernetes.hooks.kubernetes import KubernetesHook
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from airflow.providers.cncf.kubernetes.operators.resource import (KubernetesCreateResourceOperator,
                                                                   KubernetesDeleteResourceOperator,
                                                                   KubernetesResourceBaseOperator)

from gpupoc.dags.finished_logs import FinishedLogsMixin
from gpupoc.podspec.kpo import KPO_DEFAULTS


def _statuses(exc: BaseException) -> list[int]:
    """The HTTP statuses of a provider or client error (one per object it failed on)."""
    errors = getattr(exc, "api_exceptions", None) or [exc]
    return [int(getattr(e, "status", 0) or 0) for e in errors]


class TenantResourceOperator(KubernetesResourceBaseOperator):
    """The tenant's identity and the run's ledger for the provider's resource operators (the create or delete
    comes from the provider's class after this one)."""

    template_fields = (*KubernetesResourceBaseOperator.template_fields, "plan_path")
    verb = ""
    provider = ""  # the provider's operator this one runs
    done_statuses: tuple[int, ...] = ()
    ok_status = 0

    def __init__(self, *, plan_path: str, test_class: str, cluster_context: str | None = None,
                 in_cluster: bool | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan_path = plan_path
        self.test_class = test_class
        self.cluster_context = cluster_context
        self.in_cluster = in_cluster

    @cached_property
    def hook(self) -> KubernetesHook:
        return KubernetesHook(conn_id=self.kubernetes_conn_id, config_file=self.config_file,
                              cluster_context=self.cluster_context, in_cluster=self.in_cluster)

    def execute(self, context: Any) -> None:
        at, status = datetime.now(timezone.utc), self.ok_status
        try:
            super().execute(context)
        except Exception as exc:
            statuses = _statuses(exc)
            if not statuses or not all(s in self.done_statuses for s in statuses):
                status = next((s for s in statuses if s not in self.done_statuses), 0)
                self._ledger(context, at, status)
                raise
            self.log.info("%s: every object was already %s (HTTP %s): a rerun of this task",
                          self.task_id, "there" if self.verb == "create" else "gone", statuses)
        self._ledger(context, at, status)

    def _ledger(self, context: Any, at: datetime, status: int) -> None:
        from gpupoc.steps.context import run_context
        from gpupoc.steps.services import ledger_writes

        ctx = run_context(self.plan_path, context["ti"].dag_id, context["run_id"], self.test_class, task=self.task_id)
        ledger_writes(ctx, self.verb, self.yaml_conf or "", at, status,
                      f"{self.verb} the class's service (cncf.kubernetes {self.provider})")


class TenantCreateResourceOperator(TenantResourceOperator, KubernetesCreateResourceOperator):
    """``KubernetesCreateResourceOperator`` as the tenant; its creates in the run's ledger."""

    verb, provider, done_statuses, ok_status = "create", "KubernetesCreateResourceOperator", (409,), 201


class TenantDeleteResourceOperator(TenantResourceOperator, KubernetesDeleteResourceOperator):
    """``KubernetesDeleteResourceOperator`` as the tenant; its deletes in the run's ledger."""

    verb, provider, done_statuses, ok_status = "delete", "KubernetesDeleteResourceOperator", (404,), 200


class ServiceLoadOperator(FinishedLogsMixin, KubernetesPodOperator):
    """The load pod of one of the class's services, as its tenant; the pod is kept for its log (the evidence
    reads its per-second rows), and the cleanup deletes it."""

    template_fields = (*KubernetesPodOperator.template_fields, "plan_path")

    def __init__(self, *, service: str, plan_path: str, test_class: str, **kwargs: Any) -> None:
        for key, value in KPO_DEFAULTS.items():
            kwargs.setdefault(key, value)
        super().__init__(**kwargs)
        self.service = service
        self.plan_path = plan_path
        self.test_class = test_class

    def _from_plan(self, context: Any) -> str:
        """The load pod's fields and the tenant's identity from the plan (clients built before are dropped); the
        pod's name."""
        from gpupoc.podspec.kpo import pod_kwargs
        from gpupoc.steps.context import run_context
        from gpupoc.steps.services import load_pod

        run_id = context["run_id"] if context else "dry-run"
        ctx = run_context(self.plan_path, f"poc_{self.test_class}", run_id, self.test_class)
        manifest, tenant = load_pod(ctx, self.service)
        for key, value in pod_kwargs(manifest, ctx.plan, tenant).items():
            if key != "name":
                setattr(self, key, value)
        self.schedule_timeout_seconds = self.startup_timeout_seconds
        for cached in ("hook", "client", "pod_manager"):
            self.__dict__.pop(cached, None)
        return manifest["metadata"]["name"]

    def execute(self, context: Any) -> Any:
        """The provider's run of the pod; a failure before its deferral (the pod refused) is recorded for the
        services' observer (``steps.services.record_load_failure``), and a new try clears an old record."""
        self._record(context, None)
        try:
            return super().execute(context)
        except Exception as exc:
            self._record(context, exc)
            raise

    def _record(self, context: Any, error: BaseException | None) -> None:
        from gpupoc.steps.context import run_context
        from gpupoc.steps.services import record_load_failure

        dag_id = getattr(context.get("ti"), "dag_id", None) or f"poc_{self.test_class}"
        ctx = run_context(self.plan_path, dag_id, context["run_id"], self.test_class)
        record_load_failure(ctx, self.service, error)

    def build_pod_request_obj(self, context: Any = None, *, dry_run: bool = False):
        """The plan's load pod of this service, with the tenant's identity."""
        self.name = self._set_name(self._from_plan(context))
        return super().build_pod_request_obj(context, dry_run=dry_run)

    def trigger_reentry(self, context: Any, event: dict[str, Any]) -> Any:
        """A task resumed after its deferral is a fresh operator: the tenant's identity comes from the plan again
        before it reads the pod and its log."""
        self._from_plan(context)
        try:
            return super().trigger_reentry(context, event)
        except Exception as exc:  # the pod never started, or failed: recorded for the services' observer
            self._record(context, exc)
            raise
