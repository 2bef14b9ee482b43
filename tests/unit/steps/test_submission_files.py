"""A bulk shard's submission records: a batch per file, written when old enough, at once for a refusal or a
later try, and on flush; read back beside the operator's one-per-try files by every reader."""

from __future__ import annotations

from datetime import datetime, timezone

from gpupoc.pipeline.attempts import Submission
from gpupoc.pipeline.workload_outcome import Rejection
from gpupoc.steps.submission_files import BATCH_SECONDS, SubmissionBatches, read_submissions, submission_files
from gpupoc.steps.wave_end import WaveEnd

from .test_wave_end import Clock

AT = datetime(2026, 12, 7, 11, 0, tzinfo=timezone.utc)


def sub(item: str, try_number: int = 1, refused: bool = False) -> Submission:
    rejection = Rejection(403, "exceeded quota", AT) if refused else None
    return Submission(item, "team-a", None if refused else f"{item}-pod", AT, try_number, rejection)


def test_records_are_held_until_the_batch_is_old_enough_then_written_together(make_ctx):
    ctx, clock = make_ctx(task="bulk_shard"), Clock()
    batches = SubmissionBatches(ctx.writer, 0, clock=clock)
    batches.add(sub("a"))
    clock.now += BATCH_SECONDS / 2
    batches.add(sub("b"))
    assert ctx.submissions() == [], "held: not yet a second old"
    clock.now += BATCH_SECONDS / 2
    batches.add(sub("c"))
    assert [s.item for s in ctx.submissions()] == ["a", "b", "c"]
    assert len(submission_files(ctx.writer.files_dir)) == 1, "one file for the batch"


def test_a_refusal_and_a_later_try_are_written_at_once(make_ctx):
    ctx = make_ctx(task="bulk_shard")
    batches = SubmissionBatches(ctx.writer, 1, clock=Clock())
    batches.add(sub("a", refused=True))
    assert [(s.item, s.rejection.status) for s in ctx.submissions()] == [("a", 403)]
    batches.add(sub("b", try_number=2))
    assert [(s.item, s.try_number) for s in ctx.submissions()] == [("a", 1), ("b", 2)]


def test_flush_writes_what_is_held_and_a_second_shard_s_batches_keep_their_own_names(make_ctx):
    ctx = make_ctx(task="bulk_shard")
    first, second = SubmissionBatches(ctx.writer, 0, clock=Clock()), SubmissionBatches(ctx.writer, 1, clock=Clock())
    first.add(sub("a"))
    second.add(sub("b"))
    first.flush()
    first.flush()  # nothing held: no empty file
    second.flush()
    names = [p.name for p in submission_files(ctx.writer.files_dir)]
    assert names == ["submissions-0-00000.json", "submissions-1-00000.json"]
    again = SubmissionBatches(ctx.writer, 0, clock=Clock())  # the shard run again: earlier batches are kept
    again.add(sub("c"))
    again.flush()
    assert sorted(s.item for s in read_submissions(ctx.writer.files_dir)) == ["a", "b", "c"]


def test_the_operator_s_files_and_the_shards_batches_are_read_together_by_the_wave_s_end(make_ctx):
    ctx = make_ctx(task="observe")
    ctx.writer.write_json("submission-x-try1", sub("x").to_dict())
    batches = SubmissionBatches(ctx.writer, 0, clock=Clock())
    batches.add(sub("y"))
    batches.add(sub("z", try_number=2))
    subs, decided = WaveEnd()._records(ctx)
    assert [s.item for s in subs] == ["x", "y", "z"] and decided == []
    assert [s.item for s in ctx.submissions()] == ["x", "y", "z"]
