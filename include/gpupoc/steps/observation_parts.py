"""The observer's observations kept in parts: each save writes only what was observed since the save before
(``files/observations-<n>.json``), so a save at 10,000 pods does not write every earlier look again. They are
read back whole, oldest part first, by a retried observer and by collection; a run saved whole by an earlier
version (``files/observations.json``) reads as its first part."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from gpupoc.pipeline.timelines import Observation
from gpupoc.steps.context import RunContext

WHOLE = "observations"
_PART = re.compile(r"^observations-(\d+)\.json$")


def part_numbers(files_dir: Path) -> list[int]:
    """The saved parts' numbers, in order."""
    return sorted(int(m.group(1)) for p in files_dir.glob(f"{WHOLE}-*.json") if (m := _PART.match(p.name)))


def saved_dicts(ctx: RunContext) -> Iterator[dict]:
    """Every saved observation as written, oldest first (one part is held at a time)."""
    files_dir = ctx.writer.files_dir
    names = [WHOLE] if (files_dir / f"{WHOLE}.json").is_file() else []
    for name in names + [f"{WHOLE}-{n}" for n in part_numbers(files_dir)]:
        part = ctx.read_file(name, []) or []
        part.reverse()
        while part:  # each dict let go of once read: 100,000 observations at 10,000 pods
            yield part.pop()


def read_observations(ctx: RunContext) -> list[Observation]:
    """Every saved observation, oldest first."""
    return [Observation.from_dict(d) for d in saved_dicts(ctx)]


@dataclass
class ObservationParts:
    """The observations so far (``kept``), how many of them are saved, and the next part's number."""

    ctx: RunContext
    kept: list[Observation]
    saved: int = 0
    next_part: int = 0

    @classmethod
    def resumed(cls, ctx: RunContext) -> "ObservationParts":
        """What an earlier try of the observer saved, to go on from."""
        kept = read_observations(ctx)
        numbers = part_numbers(ctx.writer.files_dir)
        return cls(ctx, kept, len(kept), (numbers[-1] + 1) if numbers else 0)

    def save(self) -> None:
        """The observations not yet saved, as the next part (none when there are none)."""
        if self.saved == len(self.kept):
            return
        self.ctx.writer.write_json_items(f"{WHOLE}-{self.next_part}",
                                         (o.to_dict() for o in self.kept[self.saved:]))
        self.saved, self.next_part = len(self.kept), self.next_part + 1
