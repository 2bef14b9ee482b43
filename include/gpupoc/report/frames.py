"""The evidence tables as the report's item builders read them: the latest run's table through the report's
view (``gpupoc.report.views``), a few of its columns, a small table of its first rows, a number rounded."""

from __future__ import annotations

import pandas as pd

from gpupoc.evidence.reader import RunEvidence
from gpupoc.report.models import EvidenceTable, Figure
from gpupoc.report.views import view

Details = tuple[list[Figure], list[EvidenceTable]]
Runs = dict[str, RunEvidence]


def table(title: str, df: pd.DataFrame, limit: int = 20, source: str = "") -> EvidenceTable:
    """The first ``limit`` rows of ``df``; ``source`` ("<test class>/<table>") links the whole table."""
    return EvidenceTable.from_frame(title, df, limit, source)


def load(runs: Runs, tc: str, name: str) -> pd.DataFrame:
    """Table ``name`` of class ``tc``'s latest run, as the report shows it (``gpupoc.report.views``)."""
    ev = runs.get(tc)
    return view(name, ev.load(name)) if ev is not None else pd.DataFrame()


def cols(df: pd.DataFrame, *names: str) -> pd.DataFrame:
    """The columns of ``names`` that ``df`` has, in that order."""
    return df[[c for c in names if c in df]]


def num(v: object) -> float | None:
    """``v`` as a number rounded to two decimals; None when it is none (or NaN)."""
    try:
        x = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if x != x else round(x, 2)
