"""Who deleted each pod, and which pods were bound, from the API server's audit log (any level: Metadata
carries the objectRef).

A scheduler binds a pod with a ``create`` of ``pods/binding``; the API server fills that record's
``objectRef.uid`` with the bound pod's uid (the Binding names it), so a preemptor the platform named only by
uid is found here, and a scheduler's delete of a victim followed by its bind of another pod to the same node
names that pod as the preemptor (``pipeline/preemptors.py``)."""

from __future__ import annotations

import logging
import re
from datetime import datetime
from pathlib import Path
from typing import Iterable

from gpupoc.common.timefmt import parse_time
from gpupoc.exceptions import SourceUnavailable
from gpupoc.pipeline.audit import audit_lines_source
from gpupoc.pipeline.preemptors import Binding
from gpupoc.pipeline.workload_outcome import Deletion

log = logging.getLogger(__name__)
# Every line holding a delete request (an audit Event, or a webhook's EventList of them) has its verb so; lines
# without it are not parsed (``LinesSource.select``), and ``deletions_from_events`` judges the others in full.
DELETE_LINE = re.compile(rb'"verb"\s*:\s*"delete"')
# Every line holding a binding has its subresource so.
BINDING_LINE = re.compile(rb'"subresource"\s*:\s*"binding"')


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


def bindings_from_events(events: Iterable[dict], namespaces: Iterable[str] | None = None) -> list[Binding]:
    """The allowed ``pods/binding`` creates (in ``namespaces``; None: in any), oldest first (a binding without a
    time last)."""
    wanted = None if namespaces is None else set(namespaces)
    out = []
    for e in events:
        ref = e.get("objectRef") or {}
        code = (e.get("responseStatus") or {}).get("code")
        if (e.get("verb") != "create" or ref.get("resource") != "pods" or ref.get("subresource") != "binding"
                or (wanted is not None and ref.get("namespace") not in wanted) or not ref.get("name")
                or (code is not None and code >= 400)):
            continue
        body = e.get("requestObject") or {}
        uid = ref.get("uid") or (body.get("metadata") or {}).get("uid") or None
        node = (body.get("target") or {}).get("name") or None  # only at the Request level and above
        user = (e.get("impersonatedUser") or e.get("user") or {}).get("username") or "(unknown)"
        at = parse_time(e.get("requestReceivedTimestamp") or e.get("stageTimestamp"))
        out.append(Binding(ref["namespace"], ref["name"], uid, user, at, node))
    return sorted(out, key=lambda b: (b.at is None, b.at.timestamp() if b.at else 0.0))


def pod_bindings(source, namespaces: Iterable[str] | None = None, since: datetime | None = None) -> list[Binding]:
    """The pod bindings (in ``namespaces``; None: in any) in an audit source from ``since`` (a path is read as a log file, its binding lines
    only); a source that cannot answer gives none (a preemptor named by uid alone then stays unresolved)."""
    if isinstance(source, (str, Path)):
        source = audit_lines_source(source)
    try:
        select = getattr(source, "select", None)
        events = select(BINDING_LINE, since, None) if select else source.events(since, None)
    except (OSError, SourceUnavailable) as exc:
        log.warning("audit source %s not readable (%s): preemptors named by uid rest on the pods observed",
                    getattr(source, "origin", source), exc)
        return []
    return bindings_from_events(events, namespaces)
