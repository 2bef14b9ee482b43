"""The audit-trail class's evidence tables, one typed row model each: the only place their columns are
written. The evidence writer takes each table's schema from its model (``evidence.tables.TABLES``); the ledger's
matcher (``pipeline.audit.match_ledger``: ``LedgerMatch.row``), the hand-over probe (``artifacts.hand_over``:
``HandOver.row``) and the row builders (``rows.py``) build its rows as these models, and the suites under
``expectations/audit_trail.*`` and the report read the same column names.

This module imports nothing of the package: it sits in the evidence layer, beneath everything that writes or
reads these tables (``tests/unit/structure/test_import_graph.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass
class AuditMatch:
    """One action of the pipeline's ledger and the platform audit event that records it (if any)."""

    ledger_action: str
    actor: str | None = None
    verb: str | None = None
    resource: str | None = None
    namespace: str | None = None
    name: str | None = None
    at: datetime | None = None
    audit_event_id: str | None = None
    matched: bool | None = None
    delay_seconds: float | None = None
    decision: str | None = None
    code: int | None = None


@dataclass
class ArtifactRecord:
    """An artifact handed over from producer to consumer: where, what hash, who."""

    path: str
    sha256: str | None = None
    producer: str | None = None
    consumer: str | None = None
    namespace: str | None = None
    size_bytes: int | None = None
    verified: bool | None = None


@dataclass
class LedgerRow:
    """One action the pipeline took (who, what, when), as its own ledger recorded it."""

    at: datetime
    actor: str
    verb: str
    resource: str | None = None
    subresource: str | None = None
    namespace: str | None = None
    name: str | None = None
    http_status: int | None = None
    purpose: str | None = None
    task: str | None = None


TABLES: dict[str, type] = {"audit_matches": AuditMatch, "artifacts": ArtifactRecord, "ledger": LedgerRow}
