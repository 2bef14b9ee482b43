"""The queue-congestion class's tables: one row model each, the evidence writer's schema and the suites' columns."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pyarrow as pa

from gpupoc.classes.queue_congestion.table import TABLES, ExplanationRow, GangPlacement
from gpupoc.evidence.schema import schema, to_arrow

EXPECTATIONS = Path(__file__).resolve().parents[4] / "expectations"


def test_the_evidence_schema_of_each_class_table_is_its_row_model():
    assert TABLES == {"explanations": ExplanationRow, "gang_placements": GangPlacement}
    for name, model in TABLES.items():
        assert schema(name).names == [f.name for f in fields(model)], name
    assert schema("explanations").field("explained").type == pa.bool_()


def test_an_unjudged_wait_stays_empty_in_the_explained_column():
    rows = [ExplanationRow(pod="a", needs_explanation=True, explained=True, observed=True),
            ExplanationRow(pod="b", needs_explanation=True, explained=None, observed=False),
            ExplanationRow(pod="c", needs_explanation=False)]
    assert to_arrow("explanations", rows).column("explained").to_pylist() == [True, None, None]


def test_every_column_a_congestion_suite_reads_is_a_column_of_its_row_model():
    for name, model in TABLES.items():
        suite = json.loads((EXPECTATIONS / f"queue_congestion.{name}.json").read_text(encoding="utf-8"))
        columns = {f.name for f in fields(model)}
        read = _columns(suite["expectations"])
        assert read and read <= columns, f"{name}: the suite reads {sorted(read - columns)}, not in {model.__name__}"


def _columns(node) -> set[str]:
    """Every column an expectation names (its kwargs, its row conditions, its meta's case columns)."""
    out: set[str] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("column", "column_A", "column_B", "judged") and isinstance(v, str):
                out.add(v)
            elif k == "column" and isinstance(v, dict) and isinstance(v.get("name"), str):
                out.add(v["name"])
            elif k != "table":
                out |= _columns(v)
        if node.get("table"):  # a case told by another table's column
            out.discard(node.get("column"))
    elif isinstance(node, list):
        for v in node:
            out |= _columns(v)
    return out
