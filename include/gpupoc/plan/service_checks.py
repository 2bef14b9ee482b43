"""Cross-field checks of the classes' services: each names a ``kind: service`` workload and a tenant allowed its
priority, fits its tenant's quota beside the wave, and a node failure under a replica names a service of its class
that has a replica to spare."""

from __future__ import annotations

from gpupoc.plan.document import Plan
from gpupoc.plan.injector_checks import check_injector_platform
from gpupoc.plan.model import WorkloadKind


def check_services(plan: Plan) -> list[str]:
    """One ``path: message`` line per problem of the classes' ``services`` and ``service_failures``."""
    errors: list[str] = []
    tenants = {t.name: t for t in plan.tenants}
    workloads = {w.name: w for w in plan.workloads}
    for cls, spec in plan.test_classes.items():
        base = f"test_classes.{cls.value}.services"
        for k, entry in enumerate(spec.services):
            path = f"{base}[{k}]"
            workload, tenant = workloads.get(entry.workload), tenants.get(entry.tenant)
            if workload is None:
                errors.append(f"{path}.workload: unknown workload {entry.workload!r}; one of {sorted(workloads)}")
            elif workload.kind != WorkloadKind.SERVICE:
                errors.append(f"{path}.workload: {workload.name!r} is kind {workload.kind.value}, not service; a "
                              "class deploys only kind service workloads (a Deployment behind a Service) here")
            if tenant is None:
                errors.append(f"{path}.tenant: unknown tenant {entry.tenant!r}; one of {sorted(tenants)}")
            elif workload is not None and workload.priority_class not in tenant.priority_classes:
                errors.append(f"{path}.tenant: priority class {workload.priority_class!r} of {workload.name!r} is not "
                              f"allowed for tenant {tenant.name!r} (allowed: {tenant.priority_classes}); choose "
                              "another tenant or workload")
        names = [e.workload for e in spec.services]
        for k, name in enumerate(names):
            if name in names[:k]:
                errors.append(f"{base}[{k}].workload: {name!r} is listed twice; a class deploys each service once")
    _check_failures(plan, errors)
    return errors


def _check_failures(plan: Plan, errors: list[str]) -> None:
    fr = plan.test_classes.fault_recovery
    deployed = {e.workload: e for e in fr.services}
    for k, failure in enumerate(fr.service_failures):
        path = f"test_classes.fault_recovery.service_failures[{k}]"
        check_injector_platform(plan, failure.model_copy(update={"injector": fr.service_injector(failure)}), path,
                                errors)
        entry = deployed.get(failure.service)
        if entry is None:
            errors.append(f"{path}.service: {failure.service!r} is not among test_classes.fault_recovery.services "
                          f"({sorted(deployed) or 'none'}); deploy it in that class first")
            continue
        if not entry.traffic:
            errors.append(f"{path}.service: {failure.service!r} gets no traffic in this class (traffic: false), so "
                          "nothing shows what its users saw; set its traffic: true")
        workload = next((w for w in plan.workloads if w.name == entry.workload), None)
        traffic = entry.traffic_seconds or (workload.service.traffic.duration_seconds
                                            if workload is not None and workload.service else 0)
        bound = fr.thresholds.max_replica_replacement_seconds
        if entry.traffic and traffic and failure.at_seconds + bound > traffic:
            errors.append(f"{path}.at_seconds: the failure {failure.at_seconds:g} s into the service's {traffic} s of "
                          f"traffic leaves less than the {bound:g} s a replacement may take "
                          "(thresholds.max_replica_replacement_seconds), so its end might go unseen; raise the "
                          f"service's traffic_seconds to {failure.at_seconds + bound:g} or fail the node sooner")
        replicas = entry.replicas or (workload.replicas if workload else 1)
        if replicas < 2:
            errors.append(f"{path}.service: {failure.service!r} runs {replicas} replica, so the failure takes the "
                          "whole service down and no bound on the breach can hold; give it replicas: 2 or more")


def service_gpus(plan: Plan, test_class) -> dict[str, int]:
    """GPUs each tenant's services of ``test_class`` hold (every replica), for the quota fit."""
    workloads = {w.name: w for w in plan.workloads}
    held: dict[str, int] = {}
    for entry in plan.test_class(test_class).services:
        w = workloads.get(entry.workload)
        if w is not None:
            held[entry.tenant] = held.get(entry.tenant, 0) + (entry.replicas or w.replicas) * w.gpus
    return held
