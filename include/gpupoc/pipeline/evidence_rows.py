"""The probes' detailed rows as rows of the evidence tables (``gpupoc.evidence.tables``).

The probes keep more than the tables hold (findings, severities, review reasons); tasks write the table rows
with ``EvidenceWriter.write`` and may keep the detailed rows beside them with ``write_json``.
"""

from __future__ import annotations

import json
from typing import Iterable, Mapping

import pandas as pd

from gpupoc.kube.resources import GPU_QUOTA_KEY
from gpupoc.evidence import tables as t
from gpupoc.pipeline.artifacts import ArtifactRecord as Artifact
from gpupoc.pipeline.audit import AuditMatch as Match
from gpupoc.pipeline.audit import LedgerEntry
from gpupoc.pipeline.faults import FaultRecord
from gpupoc.pipeline.isolation import AccessAttempt
from gpupoc.pipeline.quotas import OverQuotaResult
from gpupoc.pipeline.quotas import QuotaSample as Sample


def access_probes(rows: Iterable[AccessAttempt], over_quota: Iterable[OverQuotaResult] = ()) -> list[t.AccessProbe]:
    """Cross-tenant attempts, and over-quota submissions as attempts that should not run."""
    out = [t.AccessProbe(actor_tenant=r.actor, target_namespace=r.target_namespace, action=r.action,
                         resource=r.resource, verb=r.verb, subresource=r.subresource or None, name=r.name or None,
                         at=r.at, http_status=r.http_status, allowed=r.allowed, expected_allowed=False,
                         access_review_allowed=r.sar_allowed, message=_join(r.message, r.finding),
                         audit_matched=r.audit_matched) for r in rows]
    out += [t.AccessProbe(actor_tenant=r.tenant, target_namespace=r.namespace, action=f"over_quota_{r.outcome}",
                          resource="pods", verb="create", name=r.pod, at=r.at, http_status=r.http_status,
                          allowed=r.outcome == "admitted", expected_allowed=False,
                          message=_join(f"{r.requested_gpus} GPU(s) asked, {r.remaining_gpus} left: {r.outcome}",
                                        r.user_message, r.finding)) for r in over_quota]
    return out


def quota_samples(rows: Iterable[Sample], tenants: Mapping[str, str] | None = None) -> list[t.QuotaSample]:
    """Per sample: the quota's GPU accounting, its pod count, and the GPUs the tenant's pods really hold."""
    out = []
    for r in rows:
        if not r.quota:
            continue
        tenant = (tenants or {}).get(r.namespace, r.namespace)
        base = dict(ts=r.at, tenant=tenant, namespace=r.namespace, quota=r.quota)
        out.append(t.QuotaSample(resource=GPU_QUOTA_KEY, hard=r.hard_gpus, used=r.used_gpus, source="resourcequota",
                                 **base))
        if r.hard_pods is not None:
            out.append(t.QuotaSample(resource="pods", hard=r.hard_pods, used=r.used_pods, source="resourcequota",
                                     **base))
        if r.pods_gpus is not None:
            out.append(t.QuotaSample(resource="nvidia.com/gpu held", hard=r.hard_gpus, used=r.pods_gpus,
                                     source="bound pods' GPU requests", **base))
    return out


def failure_records(rows: Iterable[FaultRecord]) -> list[t.FailureRecord]:
    out = []
    for r in rows:
        container = f"container {r.container_state} {r.container_reason}".strip()
        if r.exit_code is not None:
            container += f" exit {r.exit_code}"
        platform = _join(f"phase {r.phase or '?'}", f"reason {r.status_reason}" if r.status_reason else "", container,
                         r.container_message, f"disruption {r.disruption}" if r.disruption else "",
                         f"node {r.node}" if r.node else "", sep="; ")
        log = ("log readable after the failure" if r.user_log_readable_after else
               "log NOT readable after the failure" if r.user_log_readable_after is False else
               r.user_log_note or "log not checked")
        user = _join(r.user_status_message, log, r.user_log_tail[-400:], sep="; ")
        # what operators saw: Warning events and alerts; nothing at all leaves the column empty (FR-05 fails)
        operator = _join(f"{r.warning_events} Warning event(s) ({r.warning_reasons})" if r.warning_events else "",
                         f"alerts: {r.alerts}" if r.alerts else "", sep="; ")
        if operator and not r.warning_events:
            operator = _join("0 Warning event(s)", operator, sep="; ")
        elif operator and not r.alerts:
            operator = _join(operator, "alerts: none", sep="; ")
        released = ("GPUs released after %.1fs" % r.release_s if r.gpus_released else
                    "GPUs NOT released" if r.gpus_released is False else "GPU release not observed")
        retries = f"Airflow retries {r.airflow_retries}" if r.airflow_retries is not None else ""
        recovery = _join(r.recovery_action or "no pipeline action (the pod ended on its own)",
                         f"platform restarts {r.platform_restarts}", released,
                         f"({r.release_source})" if r.release_source else "", retries, sep="; ")
        trigger = _join(r.trigger, f"via {r.trigger_method} by {r.triggered_by} at {r.triggered_at}", sep=" ")
        out.append(t.FailureRecord(
            scenario=r.scenario, trigger=trigger, pod=r.pod, namespace=r.namespace, platform_behaviour=platform,
            user_visible=user, operator_visible=operator or None, recovery=recovery,
            # the failure itself missing from the events (events-dropped) leaves the column empty: FR-08 fails
            logs_readable=r.user_log_readable_after, events=None if r.failure_event_missing else r.events,
            airflow_retries=r.airflow_retries,
            platform_restarts=r.platform_restarts, alerts=r.alerts or None, gpu_release_seconds=r.release_s,
            verified=r.verified, reason=_join(r.reason, r.user_log_note if r.user_log_readable_after is None else "",
                                              f"findings: {r.findings}" if r.findings else "") or None))
    return out


def audit_matches(rows: Iterable[Match], required_only: bool = True) -> list[t.AuditMatch]:
    """Ledger actions beside their audit events; by default only those an audit policy must record (writes,
    denials, secret reads), so plain reads outside the policy do not count as gaps."""
    return [t.AuditMatch(ledger_action=_join(f"#{r.seq}", r.task, r.purpose, sep=" ") or f"#{r.seq}",
                         actor=r.username, verb=r.verb,
                         resource=r.resource + (f"/{r.subresource}" if r.subresource else ""),
                         namespace=r.namespace or None, name=r.name or None, at=r.at,
                         audit_event_id=r.audit_id or None, matched=r.matched, delay_seconds=r.delay_s,
                         decision=r.audit_decision or None, code=r.audit_code)
            for r in rows if r.required or not required_only]


def ledger_rows(entries: Iterable[LedgerEntry]) -> list[t.LedgerRow]:
    return [t.LedgerRow(at=e.at, actor=e.username, verb=e.verb, resource=e.resource or None,
                        subresource=e.subresource or None, namespace=e.namespace or None, name=e.name or None,
                        http_status=e.status, purpose=e.purpose or None, task=e.task or None) for e in entries]


def artifacts(rows: Iterable[Artifact]) -> list[t.ArtifactRecord]:
    return [t.ArtifactRecord(path=r.path or f"(not reported by {r.producer_pod})", sha256=r.sha256 or None,
                             producer=r.producer_pod, consumer=r.consumer or None, namespace=r.namespace,
                             size_bytes=r.size_bytes, verified=r.verified) for r in rows]


def utilization_rows(samples: pd.DataFrame, step_s: float, freq: str = "1h") -> list[t.UtilizationRow]:
    """Per time bucket, pod and GPU: mean and p95 utilization, mean memory, allocated and used GPU-hours."""
    if samples is None or samples.empty:
        return []
    df = samples[samples["allocated"].astype(bool)].copy()
    if df.empty:
        return []
    df["bucket"] = pd.to_datetime(df["timestamp"], utc=True).dt.floor(freq)
    for col in ("namespace", "pod", "tenant", "task_type", "pool", "hostname"):
        if col not in df.columns:
            df[col] = ""
    hours = step_s / 3600.0
    out = []
    keys = ["bucket", "namespace", "pod", "tenant", "task_type", "pool", "hostname", "uuid"]
    for k, g in df.groupby(keys, sort=True, dropna=False):
        rec = dict(zip(keys, k))
        out.append(t.UtilizationRow(
            bucket=rec["bucket"].to_pydatetime(), namespace=rec["namespace"] or None, pod=rec["pod"] or None,
            tenant=rec["tenant"] or None, task_type=rec["task_type"] or None, pool=rec["pool"] or None,
            node=rec["hostname"] or None, gpu_uuid=rec["uuid"] or None, util_avg=round(float(g["util"].mean()), 3),
            util_p95=round(float(g["util"].quantile(0.95)), 3),
            mem_mib_avg=None if "mem_used_mib" not in g or g["mem_used_mib"].isna().all()
            else round(float(g["mem_used_mib"].mean()), 3),
            allocated_gpu_hours=round(len(g) * hours, 6), used_gpu_hours=round(float(g["util"].sum()) / 100 * hours, 6),
            samples=int(len(g))))
    return out


def _join(*parts: str, sep: str = " | ") -> str:
    return sep.join(p for p in parts if p)


def detailed(rows: Iterable) -> list[dict]:
    """The detailed rows as JSON-able dicts (for ``EvidenceWriter.write_json``)."""
    return [json.loads(r.model_dump_json()) for r in rows]
