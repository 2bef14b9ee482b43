"""Map a request path to a file inside one allowed directory, or refuse it.

Refused: absolute paths, ``..`` segments, hidden segments (``.git``, ``.env``), NUL bytes and anything
whose real path (symlinks followed) leaves the directory. Evidence files are further limited to what a
report links to: a run's ``manifest.json``, ``tables/*`` and ``validation/*.json``.
"""

from __future__ import annotations

import mimetypes
import os
import re
from pathlib import Path, PurePosixPath

EVIDENCE_PATTERNS = (
    re.compile(r"^[^/]+/[^/]+/manifest\.json$"),
    re.compile(r"^[^/]+/[^/]+/tables/[^/]+\.(parquet|csv|json|jsonl)$"),
    re.compile(r"^[^/]+/[^/]+/validation/[^/]+\.json$"),
)
_TYPES = {".parquet": "application/vnd.apache.parquet", ".jsonl": "application/x-ndjson",
          ".md": "text/markdown; charset=utf-8", ".svg": "image/svg+xml", ".json": "application/json",
          ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf"}  # Data Docs' local Font Awesome


class Refused(ValueError):
    """A request path that must not be served; the message says why (safe to show: no file system paths)."""


def safe_file(base: Path, rel: str) -> Path:
    """The file ``base/rel``; Refused if ``rel`` would leave ``base``, FileNotFoundError if it is absent."""
    if "\x00" in rel or "\\" in rel:
        raise Refused(f"path {rel!r}: control characters and backslashes are not allowed")
    pure = PurePosixPath(rel)
    if pure.is_absolute():
        raise Refused(f"path {rel!r}: absolute paths are not allowed")
    parts = [p for p in pure.parts if p not in ("", ".")]
    for part in parts:
        if part == "..":
            raise Refused(f"path {rel!r}: '..' is not allowed")
        if part.startswith("."):
            raise Refused(f"path {rel!r}: hidden files are not served")
    root = base.resolve()
    target = root.joinpath(*parts).resolve() if parts else root
    if target != root and root not in target.parents:
        raise Refused(f"path {rel!r}: leaves the served directory (symbolic link?)")
    if target.is_dir():
        target = target / "index.html"
    if not target.is_file():
        raise FileNotFoundError(rel)
    return target


def evidence_allowed(rel: str) -> bool:
    """Whether an evidence-root path is one a report may link to (never gx/, config or credentials)."""
    norm = str(PurePosixPath(rel))
    return any(p.match(norm) for p in EVIDENCE_PATTERNS)


def media_type(path: Path) -> str:
    """Content type by suffix (HTML and text as UTF-8)."""
    suffix = path.suffix.lower()
    if suffix in _TYPES:
        return _TYPES[suffix]
    guessed, _ = mimetypes.guess_type(path.name)
    if guessed and (guessed.startswith("text/") or guessed in ("application/javascript",)):
        return f"{guessed}; charset=utf-8"
    return guessed or "application/octet-stream"


def relative_within(target: str, start: Path, base: Path) -> str | None:
    """``target`` (a link relative to directory ``start``) as a path inside ``base``, else None."""
    joined = os.path.normpath(os.path.join(str(start), target))
    try:
        rel = os.path.relpath(joined, str(base))
    except ValueError:
        return None
    if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
        return None
    return "" if rel == "." else rel
