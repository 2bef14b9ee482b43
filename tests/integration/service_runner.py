"""A class's service tasks without Airflow, for the headless class runner (``class_runner.run_class``).

What stands in for Airflow is only the provider's operators: each service's Deployment and Service are created
and deleted with its tenant's own client and ledgered as ``TenantCreateResourceOperator`` /
``TenantDeleteResourceOperator`` ledger them (``steps.services.ledger_writes``), and each load pod is created as
its tenant as ``ServiceLoadOperator`` submits it. The rollout, the observer and the collection are the pipeline's
own steps.
"""

from __future__ import annotations

import secrets
import threading

import yaml

from gpupoc.common.timefmt import utcnow
from gpupoc.steps import services as S
from gpupoc.steps.context import RunContext
from gpupoc.steps.service_observer import observe_services


class Services:
    """deploy_service, services_ready, service_traffic, observe_services and delete_service of one run."""

    def __init__(self, plan: str, dag_id: str, run_id: str, test_class: str, failures: list[str]):
        self.args = (plan, dag_id, run_id, test_class)
        self.failures = failures
        self.observer: threading.Thread | None = None
        self.observed: dict = {}  # what observe_services returned

    def ctx(self, task: str) -> RunContext:
        return RunContext(*self.args, task=task)

    def _write(self, verb: str) -> None:
        ctx = self.ctx(f"{verb}_service")
        for kw in S.resource_kwargs(ctx):
            tenant = next(t for t in ctx.plan.tenants if t.namespace == kw["namespace"])
            caller = ctx.factory.caller(tenant.kube_context)
            at, status = utcnow(), 0
            for doc in yaml.safe_load_all(kw["yaml_conf"]):
                base = (f"/apis/apps/v1/namespaces/{tenant.namespace}/deployments" if doc["kind"] == "Deployment"
                        else f"/api/v1/namespaces/{tenant.namespace}/services")
                r = (caller.call("POST", base, body=doc) if verb == "create"
                     else caller.call("DELETE", f"{base}/{doc['metadata']['name']}", body={}))
                status = r.status if not r.ok else (status or r.status)
                if not r.ok and r.status not in (404, 409):
                    self.failures.append(f"{verb}_service {doc['kind']} {doc['metadata']['name']}: HTTP {r.status} "
                                         f"{r.message}")
            S.ledger_writes(ctx, verb, kw["yaml_conf"], at, status, f"{verb} the class's service (headless)")

    def start(self) -> None:
        """Create the services, start the observer, await the rollout, then start each load pod."""
        if not self.ctx("deploy_service").spec.services:
            return
        self._write("create")
        self.observer = threading.Thread(target=self._observe)
        self.observer.start()
        ctx = self.ctx("services_ready")
        S.await_rollout(ctx)
        for kw in S.load_kwargs(ctx):
            pod, tenant = S.load_pod(ctx, kw["service"])
            pod["metadata"]["name"] = f"{pod['metadata']['name']}-{secrets.token_hex(4)}"  # as KPO's suffix
            r = ctx.factory.caller(tenant.kube_context).call("POST", f"/api/v1/namespaces/{tenant.namespace}/pods",
                                                             body=pod)
            if not r.ok:
                self.failures.append(f"service_traffic {kw['service']}: HTTP {r.status} {r.message}")

    def _observe(self) -> None:
        try:
            self.observed = observe_services(self.ctx("observe_services"))
        except Exception as exc:  # noqa: BLE001 - reported by the caller's assertion
            self.failures.append(f"observe_services: {exc!r}")

    def finish(self) -> None:
        """Wait for the observer, then delete the services as their tenants."""
        if self.observer is None:
            return
        self.observer.join()
        self._write("delete")
