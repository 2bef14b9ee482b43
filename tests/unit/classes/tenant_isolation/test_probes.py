"""The tenant-isolation collector's typed rows: the reclaim probe's result and the fair shares."""

from __future__ import annotations

from types import SimpleNamespace

from gpupoc.classes.tenant_isolation.probes import write_reclaim
from gpupoc.classes.tenant_isolation.reclaim_judge import reclaim_row
from gpupoc.classes.tenant_isolation.table import ReclaimProbeRow
from gpupoc.evidence import to_arrow

from tests.unit.pipeline.timelines import at


class Writer:
    def __init__(self):
        self.tables: dict[str, list] = {}
        self.unverified: dict[str, str] = {}

    def write(self, table, rows, source=""):
        self.tables[table] = list(rows)

    def mark_not_verified(self, table, reason, source=""):
        self.unverified[table] = reason


def ctx_with(saved: dict | None) -> SimpleNamespace:
    return SimpleNamespace(spec=SimpleNamespace(reclaim=object()), writer=Writer(),
                           read_file=lambda name, default=None: saved if saved is not None else default)


def test_the_reclaim_probe_s_saved_result_becomes_one_typed_row_with_its_times():
    row = reclaim_row(borrower="a", lender="b", pool="p", borrower_guaranteed=2, borrower_held=4, lender_asks=[2],
                      free={}, submitted_at=at(10), placed=[at(25)], taken=1, observed_seconds=15.0,
                      max_reclaim_seconds=30)
    saved = {**{k: v for k, v in vars(row).items()}, "submitted_at": "2026-12-01T10:00:10Z",
             "placed_at": "2026-12-01T10:00:25Z", "borrower_submitted_at": "2026-12-01T10:00:01Z"}
    ctx = ctx_with(saved)
    assert write_reclaim(ctx) == {"reclaimed": True, "reclaim_seconds": 15.0}
    [written] = ctx.writer.tables["reclaim_probes"]
    assert isinstance(written, ReclaimProbeRow) and written.borrower_submitted_at.second == 1
    assert to_arrow("reclaim_probes", [written]).to_pylist()[0]["needs_reclaim"] is True


def test_no_saved_reclaim_result_is_not_verified_and_names_the_task():
    ctx = ctx_with(None)
    assert write_reclaim(ctx) == {"reclaimed": None}
    assert "reclaim_probe task recorded no result" in ctx.writer.unverified["reclaim_probes"]
