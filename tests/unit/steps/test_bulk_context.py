"""ShardContext: a bulk shard decides many ended attempts at once, so it reads the platform's records and the
observer's last states once per interval and shares them; a shard built from a run's context works at all."""

from __future__ import annotations

from gpupoc.steps.bulk import ShardContext
from gpupoc.steps.context import RunContext


def _shard_of(ctx: RunContext) -> ShardContext:
    return ShardContext(ctx.plan_file, ctx.dag_id, ctx.run_id, ctx.test_class, "bulk_shard", ctx._factory)


def test_a_shard_context_reads_the_observed_pods_once_per_interval(make_ctx, monkeypatch):
    reads = []
    monkeypatch.setattr(RunContext, "observed_pods", lambda self: reads.append(1) or [{"n": len(reads)}])
    shard = _shard_of(make_ctx(task="bulk_shard"))
    assert shard.observed_pods() == [{"n": 1}] and shard.observed_pods() == [{"n": 1}]
    assert len(reads) == 1


def test_the_shared_reads_expire_after_the_interval(make_ctx, monkeypatch):
    reads = []
    monkeypatch.setattr(RunContext, "observed_pods", lambda self: reads.append(1) or len(reads))
    monkeypatch.setattr(ShardContext, "RECORDS_SECONDS", -1.0)  # every read is stale at once
    shard = _shard_of(make_ctx(task="bulk_shard"))
    assert [shard.observed_pods(), shard.observed_pods()] == [1, 2]


def test_records_asked_for_given_events_are_never_shared(make_ctx, monkeypatch):
    calls = []
    monkeypatch.setattr(RunContext, "platform_records",
                        lambda self, namespaces=None, events=None: calls.append(events) or len(calls))
    shard = _shard_of(make_ctx(task="bulk_shard"))
    assert [shard.platform_records(events=["e"]), shard.platform_records(events=["e"])] == [1, 2]
    assert [shard.platform_records(["ns"]), shard.platform_records(["ns"])] == [3, 3]
