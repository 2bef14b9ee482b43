"""The audit-trail class's detailed rows as rows of its tables (``table.py``): the pipeline's ledger, its actions
beside their audit events, and the artifact hand-over."""

from __future__ import annotations

from typing import Iterable

from gpupoc.classes.audit_trail import table as t
from gpupoc.classes.audit_trail.artifacts import ArtifactRecord as Artifact
from gpupoc.common.timefmt import parse_time
from gpupoc.pipeline.audit import AuditMatch as Match
from gpupoc.pipeline.audit import LedgerEntry


def audit_matches(rows: Iterable[Match], required_only: bool = True) -> list[t.AuditMatch]:
    """Ledger actions (named ``verb resource namespace/name``) beside their audit events; with ``required_only``
    only those an audit policy must record (writes, denials, secret reads), so plain reads outside the policy do
    not count as gaps."""
    return [t.AuditMatch(ledger_action=f"{r.verb} {r.resource} {r.namespace}/{r.name}".strip(),
                         actor=r.username, verb=r.verb, resource=r.resource,
                         namespace=r.namespace or None, name=r.name or None, at=parse_time(r.at),
                         audit_event_id=r.audit_id or None, matched=r.matched, delay_seconds=r.delay_s,
                         decision=r.audit_decision or None, code=r.audit_code)
            for r in rows if r.required or not required_only]


def ledger_rows(entries: Iterable[LedgerEntry]) -> list[t.LedgerRow]:
    """The pipeline's ledger, one row per action: who, what, when, the answer and why."""
    return [t.LedgerRow(at=parse_time(e.at), actor=e.username, verb=e.verb, resource=e.resource or None,
                        subresource=e.subresource or None, namespace=e.namespace or None, name=e.name or None,
                        http_status=e.status, purpose=e.purpose or None, task=e.task or None) for e in entries]


def artifacts(rows: Iterable[Artifact]) -> list[t.ArtifactRecord]:
    """Each hand-over: where the artifact is, its hash, producer and consumer, verified or not."""
    return [t.ArtifactRecord(path=r.path or f"(not reported by {r.producer_pod})", sha256=r.sha256 or None,
                             producer=r.producer_pod, consumer=r.consumer or None, namespace=r.namespace,
                             size_bytes=r.size_bytes, verified=r.verified) for r in rows]
