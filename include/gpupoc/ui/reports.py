"""The reports under the report directory, newest first, read from each ``report.json``.

A report directory is ``<report_dir>/<run id>/`` (the ``poc_report`` DAG); a report written straight into
``<report_dir>`` (``gpupoc report ROOT``) is listed under the id ``_``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from gpupoc.ui.files import Refused

ROOT_REPORT_ID = "_"
REPORT_FILES = ("report.html", "summary.html", "report.md", "report.json", "report.junit.xml", "report.pdf")
_RUN_ID = re.compile(r"^[A-Za-z0-9_.:+\-]{1,200}$")


@dataclass
class ReportEntry:
    """One report as the index shows it."""

    run_id: str
    path: Path
    generated_at: datetime
    decision: str | None = None
    title: str = ""
    language: str = ""
    verdicts: dict[str, int] = field(default_factory=dict)
    blocking: list[str] = field(default_factory=list)
    signoff: dict[str, str] = field(default_factory=dict)  # role -> confirmed | objected | open
    files: list[str] = field(default_factory=list)
    error: str | None = None

    def summary(self) -> dict:
        return {"run_id": self.run_id, "generated_at": self.generated_at.isoformat(), "decision": self.decision,
                "title": self.title, "language": self.language, "verdicts": self.verdicts,
                "blocking": self.blocking, "signoff": self.signoff, "files": self.files, "error": self.error}


def _is_report_dir(path: Path) -> bool:
    return any((path / name).is_file() for name in REPORT_FILES)


def read_entry(run_id: str, path: Path) -> ReportEntry:
    """Summary of one report directory; an unreadable report.json shows as an error, not a crash."""
    files = [n for n in REPORT_FILES if (path / n).is_file()]
    mtime = max(((path / n).stat().st_mtime for n in files), default=path.stat().st_mtime)
    entry = ReportEntry(run_id=run_id, path=path, files=files,
                        generated_at=datetime.fromtimestamp(mtime, tz=timezone.utc))
    if "report.json" not in files:
        entry.error = "report.json missing"
        return entry
    try:
        data = json.loads((path / "report.json").read_text(encoding="utf-8"))
        entry.decision = str(data["decision"])
        entry.title = str(data.get("title", ""))
        entry.language = str(data.get("language", ""))
        items = data.get("items") or []
        entry.verdicts = dict(Counter(str(i.get("verdict")) for i in items))
        entry.blocking = [str(i.get("id")) for i in items
                          if i.get("tier") == "must" and i.get("verdict") != "pass"]
        entry.signoff = {str(b.get("role")): str(b.get("status")) for b in data.get("signoff") or []}
        generated = data.get("generated_at")
        if generated:
            stamp = datetime.fromisoformat(str(generated))
            entry.generated_at = stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        entry.error = f"report.json unreadable: {type(exc).__name__}: {exc}"
    return entry


def list_reports(report_dir: Path) -> list[ReportEntry]:
    """Every report under ``report_dir``, newest first (by ``generated_at``, then by id)."""
    if not report_dir.is_dir():
        return []
    entries = [read_entry(p.name, p) for p in report_dir.iterdir()
               if p.is_dir() and not p.name.startswith(".") and _is_report_dir(p)]
    if _is_report_dir(report_dir):
        entries.append(read_entry(ROOT_REPORT_ID, report_dir))
    return sorted(entries, key=lambda e: (e.generated_at, e.run_id), reverse=True)


def report_path(report_dir: Path, run_id: str) -> Path:
    """Directory of report ``run_id``; Refused for an id that is not one path segment."""
    if run_id == ROOT_REPORT_ID:
        return report_dir
    if not _RUN_ID.match(run_id) or run_id in (".", "..") or run_id.startswith("."):
        raise Refused(f"report id {run_id!r}: expected one path segment of letters, digits and _.:+-")
    return report_dir / run_id
