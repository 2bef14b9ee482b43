"""Each step's requests found in the audit log: the verb, objectRef, response code and the authorization
decision annotations of the last ``ResponseComplete`` record that matches."""

from __future__ import annotations

import json
from pathlib import Path

from gpupoc.fidelity.model import ScenarioResult
from gpupoc.fidelity.normalise import present
from gpupoc.fidelity.run import AuditMark

DECISION = "authorization.k8s.io/decision"
REASON = "authorization.k8s.io/reason"


def read_log(path: Path | None) -> list[dict]:
    """The log's JSON lines (a line that does not parse is skipped; no log reads as none)."""
    if path is None or not Path(path).is_file():
        return []
    out = []
    for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            out.append(event)
    return out


def matches(event: dict, mark: AuditMark) -> bool:
    ref = event.get("objectRef") or {}
    user = (event.get("user") or {}).get("username", "")
    return (event.get("stage") == "ResponseComplete" and event.get("verb") == mark.verb
            and ref.get("resource") == mark.resource and (ref.get("subresource") or "") == mark.subresource
            and (ref.get("namespace") or "") == mark.namespace and (not mark.name or ref.get("name") == mark.name)
            and (not mark.user or user == mark.user))


def record(result: ScenarioResult, marks: list[AuditMark], events: list[dict], source: str) -> None:
    """For each mark: its audit record's fields, or ``absent`` (with the log's name when it had no records)."""
    for mark in marks:
        rec = result.record(mark.step)
        key = f"audit.{mark.label}"
        found = [e for e in events if matches(e, mark)]
        if not found:
            rec.see(key, None if events else f"no audit log at {source}")
            continue
        event = found[-1]
        ref = event.get("objectRef") or {}
        notes = event.get("annotations") or {}
        rec.see(key, "found")
        rec.see(f"{key}.code", (event.get("responseStatus") or {}).get("code"))
        rec.see(f"{key}.objectRef", present(ref, ("resource", "subresource", "namespace", "name", "apiGroup",
                                                  "apiVersion")))
        rec.see(f"{key}.decision", notes.get(DECISION))
        rec.see(f"{key}.reason_annotation", "present" if REASON in notes else None)
        rec.see(f"{key}.fields", present(event, ("auditID", "requestURI", "userAgent", "sourceIPs",
                                                 "requestReceivedTimestamp", "stageTimestamp", "level")))
