"""The ``watch-expiry`` behaviour: the API server's history is compacted, so old watches end with 410 Gone.

kube-apiserver compacts etcd every ``--etcd-compaction-interval`` (5 minutes by default) to the revision it noted
at the previous interval, and its watch cache keeps a bounded window of changes. A client that watches again
from a resourceVersion older than what is kept is answered 410 Gone, reason ``Expired``, in the watch cache's
words: "too old resource version: 12 (340)"; a watch served from etcd whose revision was compacted away ends
with an ERROR event "The resourceVersion for the provided watch is too old.". A client then lists again and
watches from the list's resourceVersion (client-go's reflector does).

Here both happen within a class run's time, in seconds rather than minutes:

- every ``COMPACTION_EVERY_SECONDS`` the history is compacted to the resourceVersion noted at the previous
  compaction (so one to two intervals of history are kept); a watch from an older resourceVersion is answered
  with the ERROR event ``too old resource version: <rv> (<compacted>)``;
- every open watch stream ends after a seeded ``WATCH_LIFE_SECONDS`` with the ERROR event
  "The resourceVersion for the provided watch is too old.".
"""

from __future__ import annotations

from dataclasses import dataclass, field

COMPACTION_EVERY_SECONDS = 15.0
WATCH_LIFE_SECONDS = (10.0, 30.0)
EXPIRED_WATCH = "The resourceVersion for the provided watch is too old."


def too_old(since: int, compacted: int) -> str:
    """The watch cache's words for a watch from a compacted resourceVersion."""
    return f"too old resource version: {since} ({compacted})"


@dataclass
class Compaction:
    """The compacted resourceVersion over time: ``advance`` is told the resourceVersion as the clock passes
    each compaction (by a store listener at every change, and at every watch request)."""

    started: float
    every: float = COMPACTION_EVERY_SECONDS
    compacted: int = 0  # resourceVersions below it are gone (a watch from it still resumes)
    noted: int = 0      # the resourceVersion noted at the last compaction: the next one compacts to it
    next_at: float = field(init=False)

    def __post_init__(self) -> None:
        self.next_at = self.started + self.every

    def advance(self, now: float, rv_at_compaction: int) -> None:
        """Every compaction due by ``now``: compact to the noted resourceVersion, note ``rv_at_compaction``
        (the store's resourceVersion when the compaction was due: no change came in between)."""
        while now >= self.next_at:
            self.compacted, self.noted = self.noted, rv_at_compaction
            self.next_at += self.every

    def expired(self, since: int, rv_now: int, now: float) -> str | None:
        """The 410 message for a watch from ``since`` now, or None when its history is still kept."""
        self.advance(now, rv_now)
        return too_old(since, self.compacted) if since < self.compacted else None
