"""The audit-trail collector's ``artifacts`` rows from the hand-over the artifact task saved."""

from __future__ import annotations

import json
from types import SimpleNamespace

from gpupoc.classes.audit_trail.artifacts import HandOver
from gpupoc.classes.audit_trail.probes import write_artifacts
from gpupoc.classes.audit_trail.table import ArtifactRecord
from gpupoc.evidence import to_arrow


class Writer:
    def __init__(self):
        self.tables: dict[str, tuple[list, str]] = {}
        self.unverified: dict[str, str] = {}

    def write(self, table, rows, source=""):
        self.tables[table] = (list(rows), source)

    def mark_not_verified(self, table, reason, source=""):
        self.unverified[table] = reason


def ctx_with(saved: dict | None) -> SimpleNamespace:
    """A run whose ``artifact`` file holds ``saved`` as the task wrote it (through JSON)."""
    text = None if saved is None else json.dumps(saved)
    return SimpleNamespace(writer=Writer(),
                           read_file=lambda name, default=None: json.loads(text) if text is not None else default)


def test_the_saved_hand_over_becomes_its_artifacts_row_with_its_consumer_as_source():
    rec = HandOver(row=ArtifactRecord(path="/v/train-1/model.npz", sha256="ab" * 32, producer="train-1",
                                      consumer="eval-1", namespace="team-a", size_bytes=3, verified=True),
                   hash_verified=True, index_written=True)
    ctx = ctx_with(rec.model_dump(mode="json"))
    write_artifacts(ctx)
    [written], source = ctx.writer.tables["artifacts"]
    assert written == rec.row and source == "producer log + consumer pod log"
    [row] = to_arrow("artifacts", [written]).to_pylist()
    assert (row["path"], row["producer"], row["size_bytes"], row["verified"]) == (
        "/v/train-1/model.npz", "train-1", 3, True)


def test_a_hand_over_with_no_reported_artifact_is_not_verified_with_its_reason():
    rec = HandOver(row=ArtifactRecord(path="", producer="train-1", consumer="pipeline", namespace="team-a",
                                      verified=False), reason="the producer's log has no 'artifact: ' line")
    ctx = ctx_with(rec.model_dump(mode="json"))
    write_artifacts(ctx)
    assert "artifacts" not in ctx.writer.tables
    assert ctx.writer.unverified["artifacts"] == "the producer's log has no 'artifact: ' line"


def test_a_producer_that_never_finished_or_no_file_at_all_is_not_verified():
    ctx = ctx_with({"verified": False, "reason": "the producer pod did not finish in time"})
    write_artifacts(ctx)
    assert ctx.writer.unverified["artifacts"] == "the producer pod did not finish in time"
    ctx = ctx_with(None)
    write_artifacts(ctx)
    assert ctx.writer.unverified["artifacts"] == "no artifact hand-over recorded"
