"""The operator's records of the pods it submitted, as files of the run.

The per-pod operator writes one file per try (``submission-<item>-try<N>.json``). A bulk shard writes its
records a batch per file (``submissions-<shard>-<n>.json``, a list): written one by one, the 10,000 files of a
10,000-pod wave cost the shards some 14 CPU-seconds while they created the pods, beside the API server. A batch
is written once it is ``BATCH_SECONDS`` old, at once for a refusal or a later try, and whenever the shard says
all its creations were sent; so a shard that dies loses at most that much of its records.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Callable

from gpupoc.evidence.writer import EvidenceWriter
from gpupoc.pipeline.attempts import Submission
from gpupoc.steps.markers import SUBMISSION_BATCH_PREFIX, SUBMISSION_PREFIX

BATCH_SECONDS = 1.0


def submission_files(files_dir: Path) -> list[Path]:
    """Every submission file of the run: the operator's, then the shards' batches."""
    if not files_dir.is_dir():
        return []
    return [*sorted(files_dir.glob(f"{SUBMISSION_PREFIX}*.json")),
            *sorted(files_dir.glob(f"{SUBMISSION_BATCH_PREFIX}*.json"))]


def read_submission_file(path: Path) -> list[Submission]:
    """The records of one file (ValueError or KeyError while it is being written)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    return [Submission.from_dict(d) for d in (doc if isinstance(doc, list) else [doc])]


def read_submissions(files_dir: Path) -> list[Submission]:
    """Every record of the run's submission files."""
    return [s for path in submission_files(files_dir) for s in read_submission_file(path)]


class SubmissionBatches:
    """One shard's records, written a batch per file (``flush``); safe to add to from several threads."""

    def __init__(self, writer: EvidenceWriter, shard: int, clock: Callable[[], float] = time.monotonic):
        self.writer, self.shard, self.clock = writer, shard, clock
        self._lock = threading.Lock()
        self._held: list[Submission] = []
        self._since = 0.0
        # a shard's task that ran before (not retried by the DAG, but run again by hand) keeps its batches
        self._next = len(list(writer.files_dir.glob(f"{self._prefix}*.json"))) if writer.files_dir.is_dir() else 0

    @property
    def _prefix(self) -> str:
        return f"{SUBMISSION_BATCH_PREFIX}{self.shard}-"

    def add(self, submission: Submission) -> None:
        """Hold ``submission``; write the batch when it is old enough, or at once for a refusal or a later try."""
        with self._lock:
            if not self._held:
                self._since = self.clock()
            self._held.append(submission)
            urgent = submission.rejection is not None or submission.try_number > 1
            if urgent or self.clock() - self._since >= BATCH_SECONDS:
                self._write()

    def flush(self) -> None:
        """Write what is held."""
        with self._lock:
            self._write()

    def _write(self) -> None:
        if not self._held:
            return
        self.writer.write_json(f"{self._prefix}{self._next:05d}", [s.to_dict() for s in self._held])
        self._next += 1
        self._held = []
