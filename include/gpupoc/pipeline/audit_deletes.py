"""Who deleted each pod, from the API server's audit log (any level: Metadata carries the objectRef)."""

from __future__ import annotations

import logging
import re
from datetime import datetime
from pathlib import Path
from typing import Iterable

from gpupoc.common.timefmt import parse_time
from gpupoc.exceptions import SourceUnavailable
from gpupoc.pipeline.audit import audit_lines_source
from gpupoc.pipeline.workload_outcome import Deletion

log = logging.getLogger(__name__)
# Every line holding a delete request (an audit Event, or a webhook's EventList of them) has its verb so; lines
# without it are not parsed (``LinesSource.select``), and ``deletions_from_events`` judges the others in full.
DELETE_LINE = re.compile(rb'"verb"\s*:\s*"delete"')


def deletions_from_events(events: Iterable[dict], namespaces: Iterable[str]) -> dict[tuple[str, str], list[Deletion]]:
    """(namespace, pod) -> the allowed delete requests on it, oldest first."""
    wanted = set(namespaces)
    out: dict[tuple[str, str], list[Deletion]] = {}
    for e in events:
        ref = e.get("objectRef") or {}
        code = (e.get("responseStatus") or {}).get("code")
        if (e.get("verb") != "delete" or ref.get("resource") != "pods" or ref.get("subresource")
                or ref.get("namespace") not in wanted or not ref.get("name") or (code is not None and code >= 400)):
            continue
        user = (e.get("impersonatedUser") or e.get("user") or {}).get("username") or "(unknown)"
        at = parse_time(e.get("requestReceivedTimestamp") or e.get("stageTimestamp"))
        out.setdefault((ref["namespace"], ref["name"]), []).append(Deletion(user, at, code))
    for v in out.values():
        v.sort(key=lambda d: (d.at is None, d.at.timestamp() if d.at else 0.0))
    return out


def pod_deletions(source, namespaces: Iterable[str],
                  since: datetime | None = None) -> dict[tuple[str, str], list[Deletion]]:
    """The pod deletes in an audit source (``gpupoc.monitoring.audit_source``; a path is read as a log file)
    from ``since``; a source that cannot answer gives none (outcomes then rest on the platform's events). A log
    file is read for its delete requests only (``DELETE_LINE``): a wave of 10,000 pods logs every create and
    release with the whole pod, hundreds of MiB once parsed, and deletes are a few lines of it."""
    if isinstance(source, (str, Path)):
        source = audit_lines_source(source)
    try:
        select = getattr(source, "select", None)
        events = select(DELETE_LINE, since, None) if select else source.events(since, None)
    except (OSError, SourceUnavailable) as exc:
        log.warning("audit source %s not readable (%s): pod outcomes rest on the platform's events alone",
                    getattr(source, "origin", source), exc)
        return {}
    return deletions_from_events(events, namespaces)
