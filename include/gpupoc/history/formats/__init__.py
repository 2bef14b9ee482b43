"""The history formats: Acme and Helios traces, Slurm sacct, and any CSV with a column mapping."""

from __future__ import annotations

from pathlib import Path

from gpupoc.exceptions import ConfigError
from gpupoc.history.formats import acme, csvmap, helios, sacct
from gpupoc.history.formats.engine import ParsedHistory, RowError, SourceFormat, read_source

FORMATS = ("acme", "helios", "sacct", "csv")


def source_format(name: str, columns: str | None = None) -> SourceFormat:
    """The reader of format ``name``; ``columns`` is the ``--columns`` mapping (csv only)."""
    if name == "csv":
        return csvmap.source_format(columns)
    if columns:
        raise ConfigError("--columns", [f"--columns: only applies to --format csv, got --format {name}; drop it"])
    fixed = {"acme": acme.FORMAT, "helios": helios.FORMAT, "sacct": sacct.FORMAT}
    if name not in fixed:
        raise ConfigError("--format", [f"--format: unknown format {name!r}; one of {', '.join(FORMATS)}"])
    return fixed[name]


def read_history_file(path: str | Path, fmt: str, columns: str | None = None, timezone: str = "UTC") -> ParsedHistory:
    """Read ``path`` in format ``fmt`` (``acme``, ``helios``, ``sacct``, ``csv`` with ``columns``)."""
    return read_source(path, source_format(fmt, columns), timezone)


__all__ = ["FORMATS", "ParsedHistory", "RowError", "read_history_file", "source_format"]
