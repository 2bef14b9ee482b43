"""The ledger, its audit matches and the artifact hand-over become the class's table rows and pass their Arrow
schemas."""

from __future__ import annotations

from gpupoc.classes.audit_trail import rows as ev
from gpupoc.classes.audit_trail.artifacts import HandOver
from gpupoc.classes.audit_trail.table import ArtifactRecord, AuditMatch
from gpupoc.common.timefmt import parse_time
from gpupoc.evidence import to_arrow
from gpupoc.pipeline.audit import LedgerEntry, LedgerMatch

AT = "2026-03-01T12:00:00.000001Z"


def _match(seq: int, verb: str, matched: bool, required: bool = True, **row) -> LedgerMatch:
    return LedgerMatch(row=AuditMatch(ledger_action=f"{verb} pods", actor="u", verb=verb, resource="pods",
                                      at=parse_time(AT), matched=matched, **row), seq=seq, required=required)


def test_ledger_audit_and_artifact_rows_fit_their_tables():
    e = LedgerEntry(seq=1, at=AT, context="admin", username="kubernetes-admin", verb="patch",
                    resource="resourcequotas", namespace="team-a", name="q", status=200, purpose="quota change",
                    task="audit")
    m = LedgerMatch(row=AuditMatch(ledger_action="patch resourcequotas team-a/q", actor="kubernetes-admin",
                                   verb="patch", resource="resourcequotas", namespace="team-a", name="q",
                                   at=parse_time(AT), matched=False),
                    seq=1, task="audit", purpose="quota change", finding="no audit event")
    a = HandOver(row=ArtifactRecord(path="/v/train-1/model.npz", sha256="ab" * 32, producer="train-1",
                                    consumer="pipeline", namespace="team-a", verified=True))
    assert to_arrow("ledger", ev.ledger_rows([e])).to_pylist()[0]["http_status"] == 200
    [match] = to_arrow("audit_matches", ev.audit_matches([m])).to_pylist()
    assert match["matched"] is False and match["ledger_action"] == "patch resourcequotas team-a/q"
    [art] = to_arrow("artifacts", ev.artifacts([a])).to_pylist()
    assert (art["producer"], art["verified"]) == ("train-1", True)


def test_a_hand_over_with_no_reported_artifact_has_no_artifacts_row():
    unreported = HandOver(row=ArtifactRecord(path="", producer="train-1", namespace="team-a", verified=False),
                          reason="no artifact was reported")
    assert not unreported.reported and ev.artifacts([unreported]) == []


def test_audit_matches_leave_out_reads_outside_the_audit_policy_by_default():
    read = _match(2, "get", matched=False, required=False)
    write = _match(3, "create", matched=True, audit_event_id="x")
    assert [r.verb for r in ev.audit_matches([read, write])] == ["create"]
    assert len(ev.audit_matches([read, write], required_only=False)) == 2
