"""Who deleted each pod, from the API server's audit log (any level: Metadata carries the objectRef)."""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path
from typing import Iterable

from gpupoc.common.timefmt import parse_time
from gpupoc.exceptions import SourceUnavailable
from gpupoc.pipeline.audit import read_audit_lines
from gpupoc.pipeline.workload_outcome import Deletion

log = logging.getLogger(__name__)


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
    from ``since``; a source that cannot answer gives none (outcomes then rest on the platform's events)."""
    try:
        events = read_audit_lines(source) if isinstance(source, (str, Path)) else source.events(since, None)
    except (OSError, SourceUnavailable) as exc:
        log.warning("audit source %s not readable (%s): pod outcomes rest on the platform's events alone",
                    getattr(source, "origin", source), exc)
        return {}
    return deletions_from_events(events, namespaces)
