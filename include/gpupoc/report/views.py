"""How an evidence table reads in the report: the same rows, with what only makes sense on the machine that
collected them made relative.

An artifact's path is shown on its tenant's volume, from its producer's directory on (``<producer>/model.npz``):
``gpupoc.classes.audit_trail.artifacts`` takes the part before ``/<producer pod>/`` as where the volume is mounted, which on
the simulated cluster is a directory of the host (``…/var/sim/volumes/<namespace>/artifacts``) and in a real
pod a mount point. A source that is a file of the collecting machine is named by its last two segments. The
item tables and the evidence pages both read tables through here.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Callable

import pandas as pd

from gpupoc.report.cells import untraced


def volume_path(path: object, producer: object) -> object:
    """``path`` from its producer's directory on; unchanged when it does not name one."""
    if not isinstance(path, str) or not isinstance(producer, str) or not producer:
        return path
    marker = f"/{producer}/"
    return path[path.index(marker) + 1:] if marker in path else path


def artifacts(df: pd.DataFrame) -> pd.DataFrame:
    if "path" not in df or "producer" not in df:
        return df
    producer = df["producer"].astype("string").str.split("/").str[-1]  # "team/pod" or "pod"
    return df.assign(path=[volume_path(p, w) for p, w in zip(df["path"], producer)])


def file_name(source: object) -> object:
    """A source that is a file of the collecting machine (an alert record, an audit log) by its last two path
    segments (``monitoring/alerts.jsonl``); any other source unchanged."""
    if not isinstance(source, str) or not source.startswith("/"):
        return source
    return "/".join(PurePosixPath(source).parts[-2:])


def failure_records(df: pd.DataFrame) -> pd.DataFrame:
    """What the user and operators saw, a traceback in it shortened to its exception (its frames name files
    of the machine the workload ran on)."""
    seen = {c: df[c].map(lambda v: untraced(v)[0] if isinstance(v, str) else v)
            for c in ("user_visible", "operator_visible") if c in df}
    return df.assign(**seen)


VIEWS: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] = {"artifacts": artifacts, "failure_records": failure_records}


def view(table: str, df: pd.DataFrame) -> pd.DataFrame:
    """``df`` (rows of evidence table ``table``) as the report shows it."""
    if df.empty:
        return df
    if "source" in df:
        df = df.assign(source=df["source"].map(file_name))
    fn = VIEWS.get(table)
    return fn(df) if fn is not None else df
