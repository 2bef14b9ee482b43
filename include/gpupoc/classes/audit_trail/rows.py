"""The audit-trail class's detailed rows as rows of its tables (``table.py``): the pipeline's ledger, its actions
beside their audit events, and the artifact hand-over. The matcher (``pipeline.audit.match_ledger``) and the
hand-over probe (``artifacts.hand_over``) build their table rows as the table's models; these pick them out."""

from __future__ import annotations

from typing import Iterable

from gpupoc.classes.audit_trail import table as t
from gpupoc.classes.audit_trail.artifacts import HandOver
from gpupoc.common.timefmt import parse_time
from gpupoc.pipeline.audit import LedgerEntry, LedgerMatch


def audit_matches(rows: Iterable[LedgerMatch], required_only: bool = True) -> list[t.AuditMatch]:
    """Ledger actions (named ``verb resource namespace/name``) beside their audit events; with ``required_only``
    only those an audit policy must record (writes, denials, secret reads), so plain reads outside the policy do
    not count as gaps."""
    return [r.row for r in rows if r.required or not required_only]


def ledger_rows(entries: Iterable[LedgerEntry]) -> list[t.LedgerRow]:
    """The pipeline's ledger, one row per action: who, what, when, the answer and why."""
    return [t.LedgerRow(at=parse_time(e.at), actor=e.username, verb=e.verb, resource=e.resource or None,
                        subresource=e.subresource or None, namespace=e.namespace or None, name=e.name or None,
                        http_status=e.status, purpose=e.purpose or None, task=e.task or None) for e in entries]


def artifacts(rows: Iterable[HandOver]) -> list[t.ArtifactRecord]:
    """Each hand-over whose producer reported an artifact: where it is, its hash, producer and consumer,
    verified or not."""
    return [r.row for r in rows if r.reported]
