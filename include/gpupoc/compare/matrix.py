"""Items and checks × candidates: each candidate's own verdict, linked to its evidence. An item or check whose
test class ran on some candidates only is "not comparable" in every column: never a win for the one that ran
it. A candidate's verdict stays beside it (``MatrixCell.verdict``)."""

from __future__ import annotations

import os
from pathlib import Path

from gpupoc.compare.models import CellStatus, MatrixCell, MatrixRow
from gpupoc.report.models import ItemResult, Report


def ran(report: Report) -> set[str]:
    """The test classes whose evidence the report judged."""
    return {s.test_class for s in report.sources}


def _href(report_dir: Path, out: Path, item: ItemResult) -> str:
    """The item's first evidence link, else its place in the candidate's report."""
    base = os.path.relpath(report_dir, out)
    first = next((e.href for e in item.evidence if e.href), None)
    return f"{base}/{first}" if first else f"{base}/report.html#item-{item.id}"


def _comparable(classes: list[str], ran_by: dict[str, set[str]]) -> bool:
    """True when every one of ``classes`` ran on all candidates or on none."""
    return all(len({tc in r for r in ran_by.values()}) == 1 for tc in classes)


def _cell(label: str, verdict, comparable: bool, href: str | None, reason: str = "") -> MatrixCell:
    status = CellStatus(verdict.value) if comparable and verdict is not None else CellStatus.NOT_COMPARABLE
    if verdict is None and comparable:
        status = CellStatus.NOT_VERIFIED
    return MatrixCell(label=label, status=status, verdict=verdict, href=href, reason=reason)


def build_matrix(reports: dict[str, tuple[Report, Path]], out: Path) -> list[MatrixRow]:
    """One row per item (in the first candidate's order, then any other's), then one per check of it."""
    ran_by = {label: ran(r) for label, (r, _) in reports.items()}
    order: dict[str, ItemResult] = {}
    for r, _ in reports.values():
        for it in r.items:
            order.setdefault(it.id, it)
    rows: list[MatrixRow] = []
    for item_id, first in order.items():
        classes = sorted({tc for r, _ in reports.values() for it in r.items if it.id == item_id
                          for tc in it.test_classes})
        comparable = _comparable(classes, ran_by)
        cells = []
        for label, (r, d) in reports.items():
            it = next((i for i in r.items if i.id == item_id), None)
            cells.append(_cell(label, it.verdict if it else None, comparable, _href(d, out, it) if it else None,
                               it.reason if it else "not in this candidate's report"))
        rows.append(MatrixRow(kind="item", id=item_id, item=item_id, tier=first.tier, test_classes=classes,
                              comparable=comparable, cells=cells))
        rows += _check_rows(item_id, first.tier, classes, comparable, reports, out)
    return rows


def _check_rows(item_id: str, tier, classes: list[str], item_comparable: bool,
                reports: dict[str, tuple[Report, Path]], out: Path) -> list[MatrixRow]:
    """The item's checks: comparable where the item is and every candidate judged the check."""
    checks: dict[str, str] = {}
    for r, _ in reports.values():
        for it in r.items:
            if it.id == item_id:
                for c in it.checks:
                    checks.setdefault(c.check_id, c.suite)
    rows = []
    for cid in checks:
        found = {label: next((c for it in r.items if it.id == item_id for c in it.checks if c.check_id == cid), None)
                 for label, (r, _) in reports.items()}
        comparable = item_comparable and all(c is not None for c in found.values())
        cells = [_cell(label, c.verdict if c else None, comparable,
                       f"{os.path.relpath(reports[label][1], out)}/report.html#item-{item_id}" if c else None,
                       c.reason if c else "not judged on this candidate")
                 for label, c in found.items()]
        rows.append(MatrixRow(kind="check", id=cid, item=item_id, tier=tier, test_classes=classes,
                              comparable=comparable, cells=cells))
    return rows
