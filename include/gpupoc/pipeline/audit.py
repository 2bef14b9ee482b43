"""Audit trail: the pipeline's own ledger of actions, matched against the platform's audit log.

Every request the pipeline makes goes through a ``LedgerCaller``, which writes one JSON line per action
(who, what, when) under the run directory. ``match_ledger`` then finds each action in the platform's audit
log (user, verb, objectRef, time window), into the action's ``audit_matches`` row (the class's table model,
``classes/audit_trail/table.py``); an action with no audit record is a finding. The same matcher
(``find_audit_event``) proves the isolation probes' denials. Matching reads only fields every audit level
keeps (user, impersonatedUser, verb, objectRef, responseStatus, timestamps, annotations), never
requestObject/responseObject, so a log written at the Metadata level serves as well. The audit-trail class's own
probes (an administrator's quota change, the artifact hand-over) are in ``gpupoc.classes.audit_trail``.
"""

from __future__ import annotations

import re
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict

from gpupoc.classes.audit_trail.table import AuditMatch
from gpupoc.common.request_attributes import RequestAttributes
from gpupoc.common.timefmt import parse_time, rfc3339, utcnow
from gpupoc.exceptions import SourceUnavailable
from gpupoc.pipeline.k8s import Actor, KubeCaller, Response, request_info

ARTIFACT_INDEX = "artifact-index"
MUTATING_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
ARTIFACT_LINE = re.compile(r"artifact:\s+(?P<path>\S+)\s+sha256=(?P<sha>[0-9a-f]{64})"
                           r"(?:\s+size=(?P<size>\d+))?(?:\s+manifest=(?P<manifest>\S+))?")


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LedgerEntry(RequestAttributes):
    """One action of the pipeline: what (verb and objectRef, the request's attributes), who (context,
    username), when, and the answer."""

    seq: int
    at: str  # when the request was sent (RFC3339 micro, UTC)
    finished_at: str = ""
    context: str
    username: str
    method: str = ""
    path: str = ""
    status: int = 0  # HTTP status; 0 when the server could not be reached
    outcome: str = ""  # allowed | denied | failed | unreachable | done (non-HTTP actions)
    purpose: str = ""
    task: str = ""


class Ledger:
    """JSON-lines ledger at ``path``; a new Ledger rewrites the file, so a rerun task writes the same file."""

    def __init__(self, path: str | Path, task: str = "", fresh: bool = True):
        self.path = Path(path)
        self.task = task
        self.entries: list[LedgerEntry] = []
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if fresh or not self.path.exists():
            self.path.write_text("")
        else:
            self.entries = read_ledger(self.path)

    def record(self, actor: Actor, verb: str, *, at: datetime | None = None, finished_at: datetime | None = None,
               resource: str = "", namespace: str = "", name: str = "", subresource: str = "",
               api_group: str = "", method: str = "", path: str = "", status: int = 0, outcome: str = "done",
               purpose: str = "") -> LedgerEntry:
        """Append one action (also for actions made outside a LedgerCaller, e.g. KPO pod submissions)."""
        with self._lock:
            entry = LedgerEntry(
                seq=len(self.entries) + 1, at=rfc3339(at or utcnow()), finished_at=rfc3339(finished_at),
                context=actor.context, username=actor.username, verb=verb, resource=resource,
                subresource=subresource, api_group=api_group, namespace=namespace, name=name, method=method,
                path=path, status=status, outcome=outcome, purpose=purpose, task=self.task)
            self.entries.append(entry)
            with self.path.open("a") as f:
                f.write(entry.model_dump_json() + "\n")
            return entry


def read_ledger(path: str | Path) -> list[LedgerEntry]:
    """Entries of one ledger file, or of every ``*.jsonl`` under a directory (ordered by time)."""
    p = Path(path)
    files = sorted(p.glob("*.jsonl")) if p.is_dir() else [p]
    out: list[LedgerEntry] = []
    for f in files:
        for i, line in enumerate(f.read_text().splitlines(), 1):
            if line.strip():
                try:
                    out.append(LedgerEntry.model_validate_json(line))
                except ValueError as e:
                    raise ValueError(f"{f}:{i}: not a ledger entry ({e}); delete the file and rerun the task that "
                                     "wrote it") from None
    return sorted(out, key=lambda e: (e.at, e.task, e.seq))


class LedgerCaller:
    """A ``KubeCaller`` that records every request it makes in a ledger, as ``actor``."""

    def __init__(self, inner: KubeCaller, actor: Actor, ledger: Ledger, purpose: str = ""):
        self.inner = inner
        self.actor = actor
        self.ledger = ledger
        self.purpose = purpose
        self.context = inner.context

    @property
    def endpoint(self) -> str:
        return getattr(self.inner, "endpoint", "")

    def with_purpose(self, purpose: str) -> "LedgerCaller":
        return LedgerCaller(self.inner, self.actor, self.ledger, purpose)

    def call(self, method: str, path: str, *, query: dict | list | None = None, body: Any = None,
             content_type: str | None = None, timeout: float | None = None, purpose: str = "",
             accept: str | None = None) -> Response:
        info = request_info(method, path, query)
        started = utcnow()
        extra = {"accept": accept} if accept else {}  # only a client that can ask for another form is asked
        try:
            r = self.inner.call(method, path, query=query, body=body, content_type=content_type, timeout=timeout,
                                **extra)
        except SourceUnavailable:
            self.record_answer(method, path, 0, started, info, purpose, outcome="unreachable")
            raise
        name = info.name
        if info.verb == "create" and not name and r.ok and isinstance(r.body, dict):
            name = (r.body.get("metadata") or {}).get("name", "")
        if not name and info.verb == "create" and isinstance(body, dict):
            name = (body.get("metadata") or {}).get("name", "")
        self.record_answer(method, path, r.status, started, info.model_copy(update={"name": name}), purpose)
        return r

    def record_answer(self, method: str, path: str, status: int, started: datetime,
                      info: RequestAttributes | None = None, purpose: str = "", outcome: str = "") -> None:
        """Record one request this identity made (also one sent by another client, e.g. the async release)."""
        outcome = outcome or ("allowed" if 200 <= status < 300 else ("denied" if status in (401, 403) else "failed"))
        self.ledger.record(self.actor, **(info or request_info(method, path)).model_dump(), at=started,
                           finished_at=utcnow(), method=method.upper(), path=path, status=status, outcome=outcome,
                           purpose=purpose or self.purpose)


# -- matching against the platform's audit log -----------------------------------------------------------

def audit_time(event: dict) -> datetime | None:
    return parse_time(event.get("requestReceivedTimestamp") or event.get("stageTimestamp"))


def _matches(event: dict, username: str, verb: str, resource: str, namespace: str, name: str,
             subresource: str, decision: str | None) -> bool:
    user = (event.get("user") or {}).get("username")
    imp = (event.get("impersonatedUser") or {}).get("username")
    if (username and username not in (user, imp)) or event.get("verb") != verb:
        return False
    ref = event.get("objectRef") or {}
    if (ref.get("resource") or "") != resource or (ref.get("subresource") or "") != (subresource or ""):
        return False
    if namespace and (ref.get("namespace") or "") != namespace:
        return False
    if name and ref.get("name") and ref.get("name") != name:
        return False
    if decision and (event.get("annotations") or {}).get("authorization.k8s.io/decision") != decision:
        return False
    return True


def find_audit_event(events: list[dict], *, username: str, verb: str, resource: str, at: datetime,
                     namespace: str = "", name: str = "", subresource: str = "", decision: str | None = None,
                     skew_s: float = 5.0, window_s: float = 60.0, used: set[str] | None = None) -> dict | None:
    """The audit event closest to ``at`` for this request (ResponseComplete preferred), or None.

    An empty ``username`` (identity unknown) matches any user; the match then shows who the platform recorded.

    ``used`` holds auditIDs already matched to other actions; the returned event's auditID is added to it.
    """
    lo, hi = at - timedelta(seconds=skew_s), at + timedelta(seconds=window_s)
    best: tuple[int, float, dict] | None = None
    for ev in events:
        if used is not None and ev.get("auditID") in used:
            continue
        t = audit_time(ev)
        if t is None or not (lo <= t <= hi):
            continue
        if not _matches(ev, username, verb, resource, namespace, name, subresource, decision):
            continue
        key = (0 if ev.get("stage") == "ResponseComplete" else 1, abs((t - at).total_seconds()), ev)
        if best is None or key[:2] < best[:2]:
            best = key
    if best is None:
        return None
    if used is not None and best[2].get("auditID"):
        used.add(best[2]["auditID"])
    return best[2]


class LedgerMatch(_Row):
    """One ledger action beside the audit record found for it (or why none was): ``row`` is its ``audit_matches``
    row, the table's own model (``classes/audit_trail/table.py`` ``AuditMatch``); the rest is what the table
    leaves out."""

    row: AuditMatch
    seq: int
    task: str = ""
    subresource: str = ""
    status: int = 0
    purpose: str = ""
    required: bool = True  # a write, a denial or a secret read: a typical audit policy must record it
    audit_user: str = ""
    audit_at: str = ""
    finding: str = ""


def match_ledger(entries: Iterable[LedgerEntry], audit_events: list[dict], *, skew_s: float = 5.0,
                 window_s: float = 60.0, verbs: set[str] | None = None) -> list[LedgerMatch]:
    """Match every ledger action (optionally only ``verbs``) to the platform's audit log.

    Actions that never reached the server (status 0) or are not API requests are skipped. An unmatched write,
    denial or secret read carries a finding: the platform's audit log cannot show who did it. Other reads are
    matched too but are not required (typical audit policies leave them out).
    """
    used: set[str] = set()
    rows: list[LedgerMatch] = []
    for e in entries:
        if e.status == 0 or not e.resource or (verbs and e.verb not in verbs):
            continue
        at = parse_time(e.at)
        ev = find_audit_event(audit_events, username=e.username, verb=e.verb, resource=e.resource, at=at,
                              namespace=e.namespace, name=e.name, subresource=e.subresource, skew_s=skew_s,
                              window_s=window_s, used=used)
        required = e.verb in MUTATING_VERBS or e.status in (401, 403) or e.resource == "secrets"
        row = AuditMatch(ledger_action=f"{e.verb} {e.resource} {e.namespace}/{e.name}".strip(), actor=e.username,
                         verb=e.verb, resource=e.resource, namespace=e.namespace or None, name=e.name or None,
                         at=at, matched=ev is not None)
        match = LedgerMatch(row=row, seq=e.seq, task=e.task, subresource=e.subresource, status=e.status,
                            purpose=e.purpose, required=required)
        if ev is None:
            if required:
                match.finding = (f"no audit event for {e.username} {e.verb} {_ref(e)} within {window_s:g}s of "
                                 f"{e.at}: the platform's audit log cannot show who did this")
        else:
            _found(match, ev, at)
        rows.append(match)
    return rows


def _found(match: LedgerMatch, ev: dict, at: datetime) -> None:
    """Fill ``match`` with the audit event found for its action."""
    stage_t = parse_time(ev.get("stageTimestamp")) or audit_time(ev)
    match.row.audit_event_id = ev.get("auditID", "") or None
    match.row.code = (ev.get("responseStatus") or {}).get("code")
    match.row.decision = (ev.get("annotations") or {}).get("authorization.k8s.io/decision", "") or None
    match.row.delay_seconds = round((stage_t - at).total_seconds(), 6) if stage_t else None
    match.audit_user = (ev.get("user") or {}).get("username", "")
    match.audit_at = rfc3339(stage_t)


def _ref(e: LedgerEntry) -> str:
    res = e.resource + (f"/{e.subresource}" if e.subresource else "")
    return f"{res} {e.namespace + '/' if e.namespace else ''}{e.name}".strip()


def audit_lines_source(path: str | Path):
    """The JSON-lines audit file at ``path`` as an audit source (``gpupoc.monitoring.audit_source.LinesSource``)."""
    from gpupoc.monitoring.audit_source import LinesSource

    return LinesSource(Path(path), f"audit log {path}", "point the plan's evidence source audit (or "
                       "audit_log_path) at the API server's --audit-log-path", what="audit log")


def read_audit_lines(path: str | Path) -> list[dict]:
    """audit.k8s.io/v1 events from a JSON-lines file (``audit_lines_source``); a missing file raises
    ``SourceUnavailable``."""
    return audit_lines_source(path).events()


def audit_events(source: Any) -> list[dict]:
    """Audit events as dicts from any source: an audit source (``gpupoc.monitoring.audit_source``), a list of
    events, a JSON-lines path, or the DataFrame (or CollectorResult) of ``gpupoc.monitoring.audit.read_audit_log``."""
    if isinstance(source, (str, Path)):
        return read_audit_lines(source)
    if callable(getattr(source, "events", None)):
        return source.events()
    frame = getattr(source, "frame", source)
    if hasattr(frame, "to_dict"):
        return [_event_from_row(r) for r in frame.to_dict("records")]
    return list(source)


def _event_from_row(r: dict) -> dict:
    """One row of the monitoring audit table back in the audit.k8s.io/v1 shape the matcher reads."""
    ts = r.get("timestamp")
    ts = rfc3339(ts.to_pydatetime() if hasattr(ts, "to_pydatetime") else parse_time(ts)) if ts is not None and \
        str(ts) not in ("NaT", "") else ""
    code = r.get("code")
    ev = {"auditID": r.get("audit_id", ""), "stage": r.get("stage", ""), "verb": r.get("verb", ""),
          "user": {"username": r.get("user", "")},
          "objectRef": {k: r.get(c) or "" for k, c in (("resource", "resource"), ("subresource", "subresource"),
                                                        ("apiGroup", "api_group"), ("namespace", "namespace"),
                                                        ("name", "name"))},
          "responseStatus": {"code": None if code is None or str(code) in ("<NA>", "nan") else int(code)},
          "stageTimestamp": ts, "annotations": {"authorization.k8s.io/decision": r.get("decision", "")}}
    if r.get("impersonated_user"):
        ev["impersonatedUser"] = {"username": r["impersonated_user"]}
    return ev

