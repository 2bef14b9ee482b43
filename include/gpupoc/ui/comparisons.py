"""The comparisons under the comparisons directory (``gpupoc compare`` / ``make compare`` write one per
directory), newest first, read from each ``comparison.json``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from gpupoc.ui.files import Refused

COMPARISON_FILES = ("comparison.html", "comparison.md", "comparison.json", "comparison.pdf")
_ID = re.compile(r"^[A-Za-z0-9_.:+\-]{1,200}$")


@dataclass
class ComparisonEntry:
    """One comparison as the index shows it: its candidates with their decisions."""

    id: str
    path: Path
    generated_at: datetime
    plan_name: str = ""
    decisions: dict[str, str] = field(default_factory=dict)   # label -> decision
    pass_every_must: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    error: str | None = None

    def summary(self) -> dict:
        return {"id": self.id, "generated_at": self.generated_at.isoformat(), "plan_name": self.plan_name,
                "decisions": self.decisions, "pass_every_must": self.pass_every_must, "files": self.files,
                "error": self.error}


def read_comparison(cid: str, path: Path) -> ComparisonEntry:
    """Summary of one comparison directory; an unreadable comparison.json shows as an error, not a crash."""
    files = [n for n in COMPARISON_FILES if (path / n).is_file()]
    mtime = max(((path / n).stat().st_mtime for n in files), default=path.stat().st_mtime)
    entry = ComparisonEntry(cid, path, datetime.fromtimestamp(mtime, tz=timezone.utc), files=files)
    try:
        data = json.loads((path / "comparison.json").read_text(encoding="utf-8"))
        entry.plan_name = str(data.get("plan_name") or "")
        entry.decisions = {str(p["label"]): str(p["decision"]) for p in data["platforms"]}
        entry.pass_every_must = [str(x) for x in (data.get("procurement") or {}).get("pass_every_must") or []]
        stamp = datetime.fromisoformat(str(data["generated_at"]))
        entry.generated_at = stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        entry.error = f"comparison.json unreadable: {type(exc).__name__}: {exc}"
    return entry


def list_comparisons(base: Path) -> list[ComparisonEntry]:
    """Every comparison directly under ``base``, newest first."""
    if not base.is_dir():
        return []
    found = [read_comparison(p.name, p) for p in base.iterdir()
             if p.is_dir() and not p.name.startswith(".") and (p / "comparison.json").is_file()]
    return sorted(found, key=lambda e: (e.generated_at, e.id), reverse=True)


def comparison_path(base: Path, cid: str) -> Path:
    """Directory of comparison ``cid``; Refused for an id that is not one path segment."""
    if not _ID.match(cid) or cid in (".", "..") or cid.startswith("."):
        raise Refused(f"comparison id {cid!r}: expected one path segment of letters, digits and _.:+-")
    return base / cid
