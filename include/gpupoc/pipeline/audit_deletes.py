"""Who deleted each pod, from the API server's audit log (any level: Metadata carries the objectRef)."""

from __future__ import annotations

import logging
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


def pod_deletions(path: str | Path, namespaces: Iterable[str]) -> dict[tuple[str, str], list[Deletion]]:
    """The audit log's pod deletes; an unreadable log gives none (outcomes then rest on events alone)."""
    try:
        events = read_audit_lines(path)
    except (OSError, SourceUnavailable) as exc:
        log.warning("audit log %s not readable (%s): pod outcomes rest on the platform's events alone", path, exc)
        return {}
    return deletions_from_events(events, namespaces)
