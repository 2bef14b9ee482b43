"""Every evidence table of the judged runs as a page a browser opens and a CSV a spreadsheet opens, beside
the link to its parquet file: ``<report>/evidence/<test class>/<table>.html`` and ``.csv``.

The CSV keeps the values as stored (times in RFC 3339, UTC; paths as ``gpupoc.report.views`` makes them
relative); the HTML page shows them as the report does (local times, units, words, quotes). Both are rewritten with the report, so they always match the evidence
it judged.
"""

from __future__ import annotations

import os
from pathlib import Path

from gpupoc.evidence.reader import RunEvidence
from gpupoc.report.models import EvidenceRef, EvidenceTable
from gpupoc.report.views import view

PAGES_DIR = "evidence"
PAGE_ROWS = 2000  # rows an HTML page shows; the CSV holds them all


def table_names(ev: RunEvidence) -> list[str]:
    """The run's tables that are there to read (a table not collected has no file)."""
    return [n for n in ev.table_names() if ev.status(n).present]


def write_pages(runs: dict[str, RunEvidence], out_dir: Path, render) -> dict[str, list[EvidenceRef]]:
    """Write the HTML page and the CSV of every table of ``runs``; return "<test class>/<table>" -> the links
    (HTML, CSV, parquet), relative to ``out_dir``. ``render(table, shown_rows)`` renders one page."""
    links: dict[str, list[EvidenceRef]] = {}
    for tc, ev in runs.items():
        for name in table_names(ev):
            df = view(name, ev.load(name))
            if df.empty and not len(df.columns):
                continue
            base = out_dir / PAGES_DIR / tc
            base.mkdir(parents=True, exist_ok=True)
            df.to_csv(base / f"{name}.csv", index=False, date_format="%Y-%m-%dT%H:%M:%S.%fZ")
            shown = EvidenceTable.from_frame(name, df, PAGE_ROWS, f"{tc}/{name}")
            (base / f"{name}.html").write_text(render(shown, tc), encoding="utf-8")
            st = ev.status(name)
            links[f"{tc}/{name}"] = [
                EvidenceRef(label="HTML", href=f"{PAGES_DIR}/{tc}/{name}.html", kind="table_html"),
                EvidenceRef(label="CSV", href=f"{PAGES_DIR}/{tc}/{name}.csv", kind="table_csv"),
                EvidenceRef(label="parquet", href=os.path.relpath(st.path, out_dir), kind="table", sha256=st.sha256)]
    return links
