"""Where the preflight reads audit events from: one small interface per source kind.

An ``AuditSource`` marks where its stream stands (``position``) and returns the ``audit.k8s.io/v1`` events
that arrived since (``events_since``). Kinds:

- ``file``: the API server's log backend, JSON lines (``--audit-log-path``; the plan's
  ``evidence_sources.audit_log_path``, or ``evidence_sources.audit`` of kind ``file`` with ``path``);
- ``webhook``: the JSON lines the audit webhook receiver writes (one ``EventList`` batch, or one event, per
  line; ``evidence_sources.audit`` of kind ``webhook`` with its record ``path``/``record``);
- ``command``: a command that prints a window's events as JSON lines or an EventList (``{start}``/``{end}``
  RFC 3339 placeholders; ``evidence_sources.audit`` of kind ``command`` with ``command``), e.g. a cloud log
  export.

Another kind registers its reader in ``AUDIT_SOURCE_KINDS`` (kind -> a function from the plan's source
settings to an ``AuditSource``).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Protocol

from gpupoc.exceptions import ConfigError, SourceUnavailable


class AuditSource(Protocol):
    kind: str
    where: str

    def position(self) -> Any: ...

    def events_since(self, position: Any) -> list[dict]: ...


def parse_lines(text: str) -> list[dict]:
    """Events from JSON lines whose lines are events or ``EventList`` batches (or one EventList document)."""
    out: list[dict] = []
    stripped = text.strip()
    chunks = [stripped] if stripped.startswith("{") and "\n" not in stripped else stripped.splitlines()
    for line in chunks:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            continue  # a line being written when we read
        out += list(doc.get("items") or []) if doc.get("kind") == "EventList" else [doc]
    return out


@dataclass
class FileSource:
    """A JSON-lines file that grows (the log backend, or the webhook receiver's record)."""

    path: Path
    kind: str = "file"

    @property
    def where(self) -> str:
        return f"{self.kind} {self.path}"

    def position(self) -> int:
        if not self.path.is_file():
            fix = ("point evidence_sources.audit_log_path at kube-apiserver's --audit-log-path (readable here)"
                   if self.kind == "file" else "start the audit webhook receiver and point the API server's "
                   "--audit-webhook-config-file at it")
            raise SourceUnavailable(str(self.path), "audit record not found", fix)
        return self.path.stat().st_size

    def events_since(self, position: int) -> list[dict]:
        with self.path.open("rb") as fh:
            fh.seek(position)
            return parse_lines(fh.read().decode("utf-8", "replace"))


@dataclass
class CommandSource:
    """A command printing the events of ``[{start}, {end}]`` (RFC 3339) as JSON lines or an EventList."""

    command: str
    timeout_s: float = 120.0
    kind: str = "command"

    @property
    def where(self) -> str:
        return f"command {self.command.split()[0] if self.command.split() else '?'}"

    def position(self) -> datetime:
        return datetime.now(timezone.utc)

    def events_since(self, position: datetime) -> list[dict]:
        end = datetime.now(timezone.utc)
        fmt = "%Y-%m-%dT%H:%M:%SZ"
        # only the two placeholders are replaced: an export command may hold braces of its own (jq, JSON)
        cmd = self.command.replace("{start}", shlex.quote(position.strftime(fmt))).replace(
            "{end}", shlex.quote(end.strftime(fmt)))
        try:
            res = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            raise SourceUnavailable(self.where, f"no output within {self.timeout_s:g} s",
                                    "make the export command faster or narrower") from None
        if res.returncode != 0:
            raise SourceUnavailable(self.where, f"exit {res.returncode}: {res.stderr.strip()[-300:]}",
                                    "run the command by hand with a window and fix it")
        return parse_lines(res.stdout)


def _attr(spec: Any, *names: str) -> Any:
    for n in names:
        v = spec.get(n) if isinstance(spec, dict) else getattr(spec, n, None)
        if v:
            return v
    return None


AUDIT_SOURCE_KINDS: dict[str, Callable[[Any, Any], AuditSource]] = {
    "file": lambda spec, plan: FileSource(plan.resolve_path(_attr(spec, "path")), "file"),
    "webhook": lambda spec, plan: FileSource(plan.resolve_path(_attr(spec, "record", "path", "record_path")),
                                             "webhook"),
    "command": lambda spec, plan: CommandSource(str(_attr(spec, "command", "export_command"))),
}


def audit_source(plan) -> AuditSource | None:
    """The plan's audit source: ``evidence_sources.audit`` when the plan has one, else ``audit_log_path``."""
    spec = getattr(plan.evidence_sources, "audit", None)
    if spec is not None:
        kind = str(getattr(_attr(spec, "kind"), "value", _attr(spec, "kind")) or "file")
        reader = AUDIT_SOURCE_KINDS.get(kind)
        if reader is None:
            raise ConfigError("evidence_sources.audit", [f"kind: no preflight reader for audit source kind {kind!r}; "
                                                         f"known: {sorted(AUDIT_SOURCE_KINDS)}"])
        return reader(spec, plan)
    path = plan.evidence_sources.audit_log_path
    return FileSource(plan.resolve_path(path)) if path else None
