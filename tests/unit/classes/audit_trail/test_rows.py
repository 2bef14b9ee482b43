"""The ledger, its audit matches and the artifact hand-over become the class's table rows and pass their Arrow
schemas."""

from __future__ import annotations

from gpupoc.classes.audit_trail import rows as ev
from gpupoc.classes.audit_trail.artifacts import ArtifactRecord
from gpupoc.evidence import to_arrow
from gpupoc.pipeline.audit import AuditMatch, LedgerEntry

AT = "2026-03-01T12:00:00.000001Z"


def test_ledger_audit_and_artifact_rows_fit_their_tables():
    e = LedgerEntry(seq=1, at=AT, context="admin", username="kubernetes-admin", verb="patch",
                    resource="resourcequotas", namespace="team-a", name="q", status=200, purpose="quota change",
                    task="audit")
    m = AuditMatch(seq=1, task="audit", at=AT, username="kubernetes-admin", verb="patch", resource="resourcequotas",
                   namespace="team-a", name="q", purpose="quota change", matched=False, finding="no audit event")
    a = ArtifactRecord(namespace="team-a", producer_pod="train-1", path="/v/train-1/model.npz", sha256="ab" * 32,
                       consumer="pipeline", verified=True)
    assert to_arrow("ledger", ev.ledger_rows([e])).to_pylist()[0]["http_status"] == 200
    [match] = to_arrow("audit_matches", ev.audit_matches([m])).to_pylist()
    assert match["matched"] is False and match["ledger_action"] == "patch resourcequotas team-a/q"
    [art] = to_arrow("artifacts", ev.artifacts([a])).to_pylist()
    assert (art["producer"], art["verified"]) == ("train-1", True)


def test_audit_matches_leave_out_reads_outside_the_audit_policy_by_default():
    read = AuditMatch(seq=2, at=AT, username="u", verb="get", resource="pods", required=False, matched=False)
    write = AuditMatch(seq=3, at=AT, username="u", verb="create", resource="pods", matched=True, audit_id="x")
    assert [r.verb for r in ev.audit_matches([read, write])] == ["create"]
    assert len(ev.audit_matches([read, write], required_only=False)) == 2
