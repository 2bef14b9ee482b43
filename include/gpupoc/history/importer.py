"""``gpupoc history import``: read a history, check every row, mark what cannot be replayed, keep the metadata."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from gpupoc.evidence.writer import sha256_file
from gpupoc.exceptions import ConfigError
from gpupoc.history.cluster import ClusterShape, skip_reason
from gpupoc.history.formats import ParsedHistory, read_history_file
from gpupoc.history.model import COLUMNS, JobState
from gpupoc.history.table import History, read_sidecar

# Bad rows listed in the error; the rest are counted (``--errors FILE`` writes them all).
SHOWN_ERRORS = 50


@dataclass
class ImportResult:
    history: History
    parsed: ParsedHistory
    cluster: ClusterShape | None = None

    @property
    def skip_counts(self) -> Counter:
        return Counter(r.skip_reason.value for r in self.history.records if r.skip_reason)

    def summary(self) -> list[str]:
        """What was read, what was wrong, what cannot be replayed and why (printed by the CLI)."""
        h, p = self.history, self.parsed
        n = len(h.records)
        lines = [f"{n} jobs from {p.source} (format {p.format}, {p.rows_read} rows read); times in "
                 f"{h.timezone} ({p.timezone_source})"]
        if p.errors:
            lines.append(f"  bad rows left out: {p.bad_rows} ({len(p.errors)} errors)")
        for reason, count in sorted(p.left_out.items()):
            lines.append(f"  rows that are not jobs, left out: {count} {reason}")
        for note, count in sorted(p.notes.items()):
            lines.append(f"  note: {note}: {count} rows")
        states = Counter(r.state.value for r in h.records)
        if n:
            lines.append("  states: " + ", ".join(f"{s.value} {100 * states[s.value] / n:.1f}%" for s in JobState
                                                  if states[s.value]))
        skips = self.skip_counts
        where = f" on {self.cluster.describe()}" if self.cluster else " (no cluster given: size not checked)"
        lines.append(f"  replayable{where}: {n - sum(skips.values())} of {n}")
        for reason, count in sorted(skips.items()):
            lines.append(f"  not replayable: {count} {reason}")
        return lines


def import_history(path: str | Path, fmt: str, *, columns: str | None = None, timezone: str = "UTC",
                   cluster: ClusterShape | None = None, skip_bad_rows: bool = False,
                   errors_file: str | Path | None = None) -> ImportResult:
    """Read ``path``; raise ConfigError naming each bad row unless ``skip_bad_rows`` (then they are counted)."""
    parsed = read_history_file(path, fmt, columns, timezone)
    if errors_file is not None:
        Path(errors_file).write_text("".join(f"{e}\n" for e in parsed.errors), encoding="utf-8")
    if parsed.errors and not skip_bad_rows:
        lines = [str(e) for e in parsed.errors[:SHOWN_ERRORS]]
        if len(parsed.errors) > SHOWN_ERRORS:
            lines.append(f"... and {len(parsed.errors) - SHOWN_ERRORS} more errors "
                         f"({parsed.bad_rows} bad rows in all): --errors FILE lists them all")
        lines.append("fix the rows, or pass --skip-bad-rows to import the good rows (the bad ones are counted)")
        raise ConfigError(str(path), lines)
    if not parsed.records:
        raise ConfigError(str(path), [_no_jobs(parsed)])
    parsed.records[:] = [r.with_skip(skip_reason(r, cluster)) for r in parsed.records]  # one list, not two
    history = History(records=parsed.records, timezone=parsed.timezone, metadata=_metadata(path, fmt, columns, parsed))
    result = ImportResult(history=history, parsed=parsed, cluster=cluster)
    history.metadata.update(not_replayable=dict(sorted(result.skip_counts.items())),
                            cluster=cluster.describe() if cluster else None)
    return result


def _no_jobs(parsed: ParsedHistory) -> str:
    """Why rows were read but no job is left: they were all bad (skipped) or all not jobs."""
    why = [f"{parsed.bad_rows} bad"] if parsed.bad_rows else []
    why += [f"{n} {reason}" for reason, n in sorted(parsed.left_out.items())]
    return (f"(rows): none of the {parsed.rows_read} rows is a job ({', '.join(why)}); an empty history "
            "replays nothing: export the jobs themselves, or fix the bad rows")


def _metadata(path: str | Path, fmt: str, columns: str | None, parsed: ParsedHistory) -> dict:
    origin = read_sidecar(path)
    return {
        "kind": "gpupoc job history",
        "columns": {name: desc for name, (_, desc) in COLUMNS.items()},
        "source": {"path": str(path), "sha256": sha256_file(Path(path)), "format": fmt, "columns": columns},
        "timezone_source": parsed.timezone_source,
        "rows_read": parsed.rows_read,
        "jobs": len(parsed.records),
        "bad_rows": parsed.bad_rows,
        "left_out": dict(parsed.left_out),
        "notes": dict(parsed.notes),
        "synthetic": bool(origin and origin.get("synthetic")),
        "origin": origin,
    }
