"""The tenant-isolation probes' detailed rows as rows of the class's tables (``table.py``): cross-tenant attempts
and over-quota submissions as ``access_probes``, quota readings as ``quota_samples`` (each reading carries its row as
the table's model). The probes keep more than the tables hold (findings, severities); tasks write these rows with
``EvidenceWriter.write``."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from gpupoc.classes.tenant_isolation import table as t
from gpupoc.classes.tenant_isolation.isolation import AccessAttempt
from gpupoc.classes.tenant_isolation.quotas import OverQuotaResult, QuotaReading
from gpupoc.common.timefmt import parse_time


def access_probes(rows: Iterable[AccessAttempt], over_quota: Iterable[OverQuotaResult] = ()) -> list[t.AccessProbe]:
    """Cross-tenant attempts (the platform's answer as the message; the finding stays in the detailed rows),
    and over-quota submissions as attempts that should not run."""
    out = [t.AccessProbe(actor_tenant=r.actor, target_namespace=r.target_namespace, action=r.action,
                         resource=r.resource, verb=r.verb, subresource=r.subresource or None, name=r.name or None,
                         at=parse_time(r.at), http_status=r.http_status, allowed=r.allowed,
                         expected_allowed=r.expected == "allowed", access_review_allowed=r.sar_allowed,
                         message=r.message, audit_matched=r.audit_matched) for r in rows]
    out += [t.AccessProbe(actor_tenant=r.tenant, target_namespace=r.namespace, action=f"over_quota_{r.outcome}",
                          resource="pods", verb="create", name=r.pod, at=parse_time(r.at), http_status=r.http_status,
                          allowed=r.outcome == "admitted", expected_allowed=False,
                          message=_join(f"{r.requested_gpus} GPU(s) asked, {r.remaining_gpus} left: {r.outcome}",
                                        r.user_message, r.finding)) for r in over_quota]
    return out


def quota_samples(rows: Iterable[QuotaReading]) -> list[t.QuotaSample]:
    """Per reading: the quota's GPU accounting, its pod count, and the GPUs the tenant's pods really hold."""
    out = []
    for r in rows:
        if not r.row.quota:
            continue
        gpus = replace(r.row, source="resourcequota")
        out.append(gpus)
        if r.hard_pods is not None:
            out.append(replace(gpus, resource="pods", hard=r.hard_pods, used=r.used_pods))
        if r.pods_gpus is not None:
            out.append(replace(gpus, resource="nvidia.com/gpu held", used=r.pods_gpus,
                               source="bound pods' GPU requests"))
    return out


def sampled_quotas(rows: Iterable[QuotaReading]) -> list[t.QuotaSample]:
    """The sampling task's rows: per reading, the quota's GPU accounting as the quota's status reports it."""
    return [r.row for r in rows]


def _join(*parts: str, sep: str = " | ") -> str:
    return sep.join(p for p in parts if p)
