"""The platform's audit events through one interface, whatever the plan's source (``gpupoc.plan.audit_spec``):
a file, the audit webhook receiver's record, or a command exporting a window from a log service.

``plan_audit_source(plan)`` builds the plan's source; ``source.events(start, end)`` returns audit.k8s.io/v1
Event dicts (a source that cannot answer raises ``SourceUnavailable``); ``caught_up`` waits until the source
holds a given moment; ``audit_fresh`` is the preflight check "a probe request shows up within
``max_audit_delay_seconds``".
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

from gpupoc.common import fastjson
from gpupoc.common.timefmt import parse_time, rfc3339, utcnow
from gpupoc.evidence.scrub import scrub_text
from gpupoc.exceptions import SourceUnavailable
from gpupoc.monitoring.audit_formats import FormatError, to_events

if TYPE_CHECKING:
    from gpupoc.pipeline.k8s import KubeCaller
    from gpupoc.plan.document import Plan

PROBE_PREFIX = "gpupoc-audit-probe-"
_SKEW = timedelta(seconds=5)


class AuditSource(Protocol):
    """Where audit events are read from; ``origin`` names it in the evidence (never a secret)."""

    origin: str
    catch_up_s: float

    def events(self, start: datetime | None = None, end: datetime | None = None) -> list[dict]: ...


def event_time(ev: dict) -> datetime | None:
    return parse_time(ev.get("stageTimestamp") or ev.get("requestReceivedTimestamp"))


def in_window(events: list[dict], start: datetime | None, end: datetime | None) -> list[dict]:
    if start is None and end is None:
        return events
    out = []
    for ev in events:
        t = event_time(ev)
        if t is not None and (start is None or t >= start) and (end is None or t <= end):
            out.append(ev)
    return out


@dataclass
class LinesSource:
    """JSON lines of Events (or of ``EventList`` batches, as a webhook backend posts them): the API server's log
    file or the webhook receiver's record. The file only grows (a rotated or truncated one is read anew), so a
    source read again parses only the lines that arrived since: a preflight or a catch-up wait polls it."""

    path: Path
    origin: str
    fix: str
    catch_up_s: float = 5.0
    what: str = "audit events"  # what is missing when the file is: "audit log", "audit webhook record"
    skipped: int = 0  # lines of the last read that were not JSON (being written, or damaged)
    _read: tuple[int, int] = (-1, 0)  # (inode, offset) up to which _events holds the file
    _events: list[dict] = field(default_factory=list, repr=False)
    _damaged: int = 0

    def events(self, start: datetime | None = None, end: datetime | None = None) -> list[dict]:
        if not self.path.is_file():
            raise SourceUnavailable(str(self.path), f"{self.what} not found", self.fix)
        with self.path.open("rb") as fh:
            inode = os.fstat(fh.fileno()).st_ino
            if inode != self._read[0] or os.fstat(fh.fileno()).st_size < self._read[1]:
                self._read, self._events, self._damaged = (inode, 0), [], 0
            fh.seek(self._read[1])
            chunk = fh.read()
        done, sep, rest = chunk.rpartition(b"\n")
        for line in done.splitlines():
            self._damaged += not _take(line, self._events)
        last = _take(rest, self._events) if rest.strip() else False  # a last line without its newline
        consumed = len(chunk) if last else len(done) + len(sep)
        self._read = (inode, self._read[1] + consumed)
        self.skipped = self._damaged + (1 if rest.strip() and not last else 0)  # the others still count
        return in_window(list(self._events), start, end)

    def select(self, pattern: "re.Pattern[bytes]", start: datetime | None = None,
               end: datetime | None = None) -> list[dict]:
        """The events of the lines ``pattern`` finds, the file read a line at a time (a line it does not find is
        never parsed): a reader after a few events of a large log (its pod deletes) holds neither the file nor
        the other events. Not kept for the next read, as ``events`` keeps what it read."""
        if not self.path.is_file():
            raise SourceUnavailable(str(self.path), f"{self.what} not found", self.fix)
        out: list[dict] = []
        with self.path.open("rb") as fh:
            for line in fh:
                if pattern.search(line):
                    _take(line, out)
        return in_window(out, start, end)


def _take(raw: bytes, out: list[dict]) -> bool:
    """Append the events of one line (an Event or an EventList) to ``out``; False when it is not JSON."""
    line = raw.strip()
    if not line:
        return True
    try:
        doc = fastjson.loads(line)  # a wave of 10,000 pods reads 10,000 binding lines
    except ValueError:
        try:  # bytes that are not UTF-8: read as the standard library reads the replaced text
            doc = json.loads(line.decode("utf-8", "replace"))
        except ValueError:
            return False
    if isinstance(doc, dict) and doc.get("kind") == "EventList":
        out += [{"kind": "Event", "apiVersion": doc.get("apiVersion", "audit.k8s.io/v1"), **i}
                for i in doc.get("items") or [] if isinstance(i, dict)]
    elif isinstance(doc, dict) and doc.get("kind", "Event") == "Event":
        out.append(doc)
    return True


@dataclass
class CommandSource:
    """A command printing a window's events in ``fmt``, run by a shell in ``cwd`` (the plan's directory)."""

    command: str
    fmt: str
    timeout_s: float = 300.0
    cwd: str | None = None
    catch_up_s: float = 600.0

    @property
    def origin(self) -> str:
        return f"audit command ({self.fmt}): {scrub_text(self.command)}"

    def events(self, start: datetime | None = None, end: datetime | None = None) -> list[dict]:
        end = end or utcnow()
        start = start or end - timedelta(hours=1)
        values = {"start": rfc3339(start), "end": rfc3339(end), "start_ms": str(int(start.timestamp() * 1000)),
                  "end_ms": str(int(end.timestamp() * 1000))}
        cmd = self.command
        for name, value in values.items():
            cmd = cmd.replace("{" + name + "}", shlex.quote(value))
        try:
            p = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=self.timeout_s, cwd=self.cwd)
        except subprocess.TimeoutExpired:
            raise SourceUnavailable(self.origin, f"timed out after {self.timeout_s:g}s",
                                    "raise evidence_sources.audit.timeout_seconds or narrow the query") from None
        if p.returncode != 0:
            raise SourceUnavailable(self.origin, f"exit {p.returncode}: {scrub_text(p.stderr.strip()[-400:])}",
                                    "run the command by hand with the same {start} and {end} and fix it")
        try:
            return in_window(to_events(p.stdout, self.fmt), start - _SKEW, end + _SKEW)
        except FormatError as exc:
            raise SourceUnavailable(self.origin, f"output is not {self.fmt}: {exc}",
                                    "set evidence_sources.audit.format to what the command prints") from None


def source_from_spec(spec, plan: "Plan") -> AuditSource:
    """The source an ``evidence_sources.audit`` spec names, paths resolved against the plan file."""
    if spec.kind == "file":
        path = plan.resolve_path(spec.path)
        return LinesSource(path, f"audit log {path}", "point evidence_sources.audit.path (or audit_log_path) at "
                           "the API server's --audit-log-path", float(spec.catch_up_seconds), "audit log")
    if spec.kind == "webhook":
        path = plan.resolve_path(spec.record)
        where = f" (receiver {spec.url})" if spec.url else ""
        return LinesSource(path, f"audit webhook record {path}{where}", "start the receiver with `gpupoc audit "
                           "webhook up` and point the API server's --audit-webhook-config-file at its config",
                           float(spec.catch_up_seconds), "audit webhook record")
    return CommandSource(spec.command, spec.format, float(spec.timeout_seconds), str(plan.base_dir),
                         float(spec.catch_up_seconds))


def plan_audit_source(plan: "Plan") -> AuditSource | None:
    """The plan's audit source (``evidence_sources.audit``, or ``audit_log_path``), None when it names none."""
    spec = plan.evidence_sources.audit_spec
    return source_from_spec(spec, plan) if spec is not None else None


def caught_up(source: AuditSource, since: datetime, until: datetime,
              done: Callable[[list[dict]], bool] | None = None, timeout_s: float | None = None,
              poll_s: float = 2.0) -> list[dict]:
    """The source's events from ``since`` to ``until`` (with a few seconds' skew), read again until ``done``
    says they hold what the caller looks for, or ``timeout_s`` (default: the source's ``catch_up_s``) passed:
    a webhook batches and a log service lags, so the run's last requests arrive after the run."""
    deadline = time.monotonic() + (source.catch_up_s if timeout_s is None else timeout_s)
    while True:
        events = source.events(since - _SKEW, until + timedelta(seconds=source.catch_up_s) + _SKEW)
        if done is None or done(events) or time.monotonic() >= deadline:
            return events
        time.sleep(poll_s)


STALE_FIX = ("point the audit source at the live stream (the log the API server writes now, the webhook receiver "
             "it posts to), include the rules of `gpupoc cluster manifests --audit-policy`, or raise "
             "test_classes.audit_trail.thresholds.max_audit_delay_seconds for a delayed export")


@dataclass(frozen=True)
class Freshness:
    """The answer of ``audit_fresh``: whether the probe showed up within the limit, after how long, and when it
    did not, why (``reason``) and what to do (``fix``); ``refused``: the probe request itself was refused."""

    fresh: bool
    source: str
    probe: str
    delay_s: float | None
    reason: str = ""
    fix: str = ""
    refused: bool = False


def audit_fresh(source: AuditSource, caller: "KubeCaller", namespace: str, max_delay_s: float,
                poll_s: float = 1.0) -> Freshness:
    """Send a probe request (a dry-run create of ConfigMap ``gpupoc-audit-probe-<random>`` in ``namespace``:
    audited as a write, leaves nothing behind) and wait up to ``max_delay_s`` for its event in ``source``."""
    probe = PROBE_PREFIX + secrets.token_hex(4)
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": probe, "namespace": namespace, "labels": {"gpupoc.io/probe": "audit"}}}
    sent = datetime.now(timezone.utc)
    r = caller.call("POST", f"/api/v1/namespaces/{namespace}/configmaps", query={"dryRun": "All"}, body=body)
    if not r.ok:
        return Freshness(False, source.origin, probe, None, f"the probe request was refused: HTTP {r.status} "
                         f"{r.message}", f"the caller needs create on configmaps in {namespace}", refused=True)
    deadline = time.monotonic() + max_delay_s
    unavailable: SourceUnavailable | None = None
    events: list[dict] = []
    while True:
        try:
            events, unavailable = source.events(sent - _SKEW, None), None
        except SourceUnavailable as exc:
            unavailable = exc
        if any(_is_probe(e, probe) for e in events):  # the delay is until the event could be read
            return Freshness(True, source.origin, probe, round((datetime.now(timezone.utc) - sent).total_seconds(), 3))
        if time.monotonic() >= deadline:
            if unavailable is not None:
                return Freshness(False, source.origin, probe, None, f"{unavailable.endpoint}: {unavailable.reason}",
                                 unavailable.fix or STALE_FIX)
            return Freshness(False, source.origin, probe, None, _stale(events, probe, max_delay_s), STALE_FIX)
        time.sleep(poll_s)


def _stale(events: list[dict], probe: str, max_delay_s: float) -> str:
    """Why the probe is missing, with the age of the newest event that arrived meanwhile."""
    stamps = [t for t in map(event_time, events) if t is not None]
    age = (f"its newest event is {(datetime.now(timezone.utc) - max(stamps)).total_seconds():.0f} s old" if stamps
           else "nothing arrived in it meanwhile")
    return (f"the probe request {probe} did not arrive within {max_delay_s:g} s ({age}): the source is stale or "
            "its policy drops configmap writes")


def _is_probe(ev: dict, probe: str) -> bool:
    ref = ev.get("objectRef") or {}
    return ref.get("name") == probe or probe in (ev.get("requestURI") or "")
