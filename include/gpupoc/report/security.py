"""The security reviewer's table: every attempt of one tenant on another's namespace, with the HTTP status the
platform answered, as actor × target × action.

One column per actor → target pair and one row per action (or the other way round, whichever has fewer
columns, so the table fits an A4 page); a cell holds the HTTP status of each attempt (403: denied). The
over-quota submission into the tenant's own namespace is a row of its own.
"""

from __future__ import annotations

import pandas as pd

from gpupoc.report.models import EvidenceTable

ARROW = " → "


def _status(values: pd.Series) -> object:
    codes = [int(v) for v in values if v == v and v is not None]
    if not codes:
        return None
    return codes[0] if len(codes) == 1 else ", ".join(str(c) for c in codes)


def attempts_table(ap: pd.DataFrame, source: str = "") -> EvidenceTable:
    """The pivot of ``access_probes``: actor → target by action, each cell the HTTP status answered."""
    df = ap.assign(pair=ap["actor_tenant"].astype(str) + ARROW + ap["target_namespace"].astype(str),
                   action=ap["action"].astype(str))
    pairs = list(dict.fromkeys(df["pair"]))
    actions = list(dict.fromkeys(df["action"]))
    by_action = len(pairs) <= len(actions)
    index, columns = ("action", "pair") if by_action else ("pair", "action")
    pv = df.pivot_table(index=index, columns=columns, values="http_status", aggfunc=_status, dropna=False)
    pv = pv.reindex(index=actions if by_action else pairs, columns=pairs if by_action else actions)
    rows = [[name] + [None if (v is None or v != v) else (int(v) if isinstance(v, float) else v) for v in row]
            for name, row in zip(pv.index, pv.to_numpy().tolist())]
    names = [str(c) for c in pv.columns]
    return EvidenceTable(title="attempts", columns=["attempt_" + index] + names, rows=rows, source=source,
                         literal_columns=names if by_action else [], column_words="" if by_action else "action")
