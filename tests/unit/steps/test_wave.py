"""The wave's steps: the release lifts only the pipeline's gate, of the whole wave at once, after the observer's
first look (or says it went without); the observer keeps what it saw, so its retry goes on from there."""

from __future__ import annotations

import json
import os

import pyarrow.parquet as pq
import pytest

from gpupoc.common.constants import PIPELINE_GATE
from gpupoc.pipeline.attempts import Submission
from gpupoc.pipeline.workload_outcome import Rejection
from gpupoc.steps import wave
from gpupoc.steps.bulk import shards
from gpupoc.steps.context import RunContext
from gpupoc.steps.observation_parts import part_numbers, saved_dicts
from gpupoc.pipeline import wave as W
from gpupoc.pipeline.k8s import Response
from gpupoc.steps.markers import OBSERVED_PODS, OBSERVING_FILE, RELEASE_FILE, RELEASING_FILE
from gpupoc.steps.shard_files import CREATED_PREFIX, created_pods

from .conftest import wave_pod, write_plan

KUEUE_GATE = "kueue.x-k8s.io/admission"


def with_pods(ctx, **kw):
    for item in ctx.items:
        p = wave_pod(ctx, item, **kw)
        ctx.factory.api.pods[(p["metadata"]["namespace"], p["metadata"]["name"])] = p
    return ctx


def gates(ctx):
    return {name: [g["name"] for g in p["spec"].get("schedulingGates") or []]
            for (_, name), p in ctx.factory.api.pods.items()}


def test_the_release_lifts_only_the_pipeline_gate_of_every_wave_pod(make_ctx):
    ctx = with_pods(make_ctx(task="release_gate"), gates=(PIPELINE_GATE, KUEUE_GATE))
    ctx.writer.write_json(OBSERVING_FILE, {"first_snapshot_at": "2026-12-01T09:00:00Z"})
    out = wave.release_gate(ctx, observer_wait_s=0)
    assert out["found"] == len(ctx.items) and out["missing"] == [] and out["observer_ready"] is True
    assert set(map(tuple, gates(ctx).values())) == {(KUEUE_GATE,)}, "the platform's own gate stays"
    patches = [e for e in ctx.ledger.entries if e.verb == "patch"]
    assert len(patches) == len(ctx.items) and {e.purpose for e in patches} == {"release the wave"}
    assert ctx.read_file(RELEASE_FILE)["observer_ready"] is True


def test_a_release_without_the_observer_goes_ahead_and_records_it(make_ctx):
    ctx = with_pods(make_ctx(task="release_gate"))
    out = wave.release_gate(ctx, observer_wait_s=0)
    assert out["observer_ready"] is False and ctx.read_file(RELEASE_FILE)["observer_ready"] is False
    assert all(g == [] for g in gates(ctx).values())


def test_an_item_whose_creation_was_refused_is_not_waited_for(tmp_path, make_ctx):
    plan = write_plan(tmp_path / "short", change=lambda d: d["test_classes"]["queue_congestion"].update(
        gate_timeout_seconds=600))
    ctx = with_pods(make_ctx(task="release_gate", plan=plan))
    refused = ctx.items[0]
    del ctx.factory.api.pods[(refused["namespace"], f"{refused['workload_key']}-x1")]
    sub = Submission(refused["workload_key"], refused["namespace"], None, None, 1,
                     Rejection(403, "exceeded quota: team-vision-gpu", None))
    ctx.writer.write_json(f"submission-{refused['workload_key']}-1", sub.to_dict())
    out = wave.release_gate(ctx, observer_wait_s=0)
    assert out["missing"] == [refused["workload_key"]] and out["found"] == len(ctx.items) - 1


def test_the_observer_ends_when_every_item_ended_and_keeps_what_it_saw(make_ctx):
    ctx = with_pods(make_ctx(task="observe"), gates=(), phase="Succeeded")
    out = wave.observe(ctx)
    assert out["open_at_deadline"] == [] and out["snapshots"] == 1
    assert ctx.files(OBSERVING_FILE).is_file(), "the release may go ahead once the observer looked"
    kept = ctx.read_file(OBSERVED_PODS)
    keys = [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in kept]
    assert keys == sorted(keys) and len(kept) == len(ctx.items)
    assert ctx.writer.table_path("queue_snapshots").is_file()


def test_the_observer_s_last_look_is_saved_once_not_checkpointed_first(make_ctx, monkeypatch):
    ctx = with_pods(make_ctx(task="observe"), gates=(), phase="Succeeded")
    saves = []
    real = wave._save_pods
    monkeypatch.setattr(wave, "_save_pods", lambda *a: (saves.append(1), real(*a)))
    assert wave.observe(ctx)["snapshots"] == 1
    assert len(saves) == 1, "the only look was written twice (checkpoint, then the final save)"


def _observed_keys(ctx) -> list[str]:
    return [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in ctx.read_file(OBSERVED_PODS)]


def test_a_large_wave_s_pods_are_saved_by_a_child_beside_the_observer_s_other_saves(make_ctx, monkeypatch):
    monkeypatch.setattr(wave, "PODS_SAVED_ASIDE_FROM", 1)
    ctx = with_pods(make_ctx(task="observe"), gates=(), phase="Succeeded")
    children = []
    real = wave.start_in_child
    monkeypatch.setattr(wave, "start_in_child", lambda work: children.append(1) or real(work))
    wave.observe(ctx)
    assert children == [1], "the pods were not saved aside"
    assert _observed_keys(ctx) == sorted(_observed_keys(ctx)) and len(_observed_keys(ctx)) == len(ctx.items)


def test_pods_a_child_could_not_save_are_saved_by_the_observer_and_nothing_half_written_stays(make_ctx,
                                                                                              monkeypatch):
    monkeypatch.setattr(wave, "PODS_SAVED_ASIDE_FROM", 1)
    ctx = with_pods(make_ctx(task="observe"), gates=(), phase="Succeeded")
    real = wave.start_in_child

    def failing(work):
        def half_then_fail():
            ctx.files(OBSERVED_PODS).with_name(f".{OBSERVED_PODS}.json.{os.getpid()}.tmp").write_text("[")
            raise OSError("disk full")
        return real(half_then_fail)

    monkeypatch.setattr(wave, "start_in_child", failing)
    wave.observe(ctx)
    assert len(_observed_keys(ctx)) == len(ctx.items), "the pods a failed child did not save are missing"
    assert not [f for f in ctx.writer.files_dir.iterdir() if f.name.endswith(".tmp")], "a half-written file stayed"


def test_a_retried_observer_goes_on_from_the_observations_already_kept(make_ctx):
    ctx = with_pods(make_ctx(task="observe"), gates=(), phase="Succeeded")
    first = len(list(saved_dicts(ctx)))
    wave.observe(ctx)
    kept = list(saved_dicts(ctx))
    once = len(kept)
    retry = RunContext(ctx.plan_file, ctx.dag_id, ctx.run_id, ctx.test_class, "observe", ctx.factory)
    again = wave.observe(retry)
    assert first == 0 and len(list(saved_dicts(ctx))) == 2 * once and again["snapshots"] == 2
    assert list(saved_dicts(ctx))[:once] == kept, "the first try's observations are kept as they were"
    assert part_numbers(ctx.writer.files_dir) == [0, 1], "the retry wrote over the first try's part"
    assert len(ctx.read_file("observations-1")) == once, "the retry wrote the first try's observations again"
    rows = pq.read_table(ctx.writer.table_path("queue_snapshots")).num_rows
    assert rows == again["rows"]


def test_the_observers_saves_are_spaced_by_the_interval_or_by_ten_times_their_own_cost():
    pace = wave.CheckpointPace()
    assert pace.due(0.0), "the first look is kept at once"
    pace.saved(0.0, 0.5)  # a cheap save: the next after CHECKPOINT_SECONDS
    assert not pace.due(0.5 + wave.CHECKPOINT_SECONDS - 1) and pace.due(0.5 + wave.CHECKPOINT_SECONDS)
    pace.saved(100.0, 106.0)  # 6 s to rewrite every observation of a 10,000-pod wave: the next 60 s later
    assert not pace.due(106.0 + wave.CHECKPOINT_SECONDS) and not pace.due(165.9) and pace.due(166.0)


class FakeTime:
    """A clock that moves only when slept on; ``then`` runs after the n-th pause (a shard's marker appears)."""

    def __init__(self, then=None, after: int = 0):
        self.now, self.pauses = 0.0, []
        self.then, self.after = then, after

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds
        if self.then and len(self.pauses) == self.after:
            self.then()


def test_the_release_waits_on_the_shards_markers_and_goes_on_at_the_first_look_after_the_last(tmp_path):
    (tmp_path / f"{CREATED_PREFIX}0.json").write_text("{}")
    fake = FakeTime(then=lambda: (tmp_path / f"{CREATED_PREFIX}1.json").write_text("{}"), after=25)
    told = []
    left = wave.await_shards_created(tmp_path, 2, 60.0, lambda n, s: told.append((n, round(s))), step_s=0.1,
                                     sleep=fake.sleep, clock=lambda: fake.now)
    assert len(fake.pauses) == 25, "no pause after the last shard's marker"
    assert left == pytest.approx(57.5)
    assert told == [(1, 60), (1, 59), (1, 58)], "one shard left, told about once a second"


def test_without_every_marker_the_wait_ends_at_its_timeout_and_an_operator_wave_never_waits(tmp_path):
    fake = FakeTime()
    assert wave.await_shards_created(tmp_path, 3, 2.0, step_s=0.5, sleep=fake.sleep, clock=lambda: fake.now) == 0
    assert fake.pauses == [0.5] * 4
    operator = FakeTime()
    assert wave.await_shards_created(tmp_path, 0, 2.0, sleep=operator.sleep, clock=lambda: operator.now) == 2.0
    assert operator.pauses == []


def shards_said_created(ctx: RunContext) -> None:
    """Every shard of the wave's bulk submission has written its "all created" marker."""
    for s in shards(ctx):
        ctx.writer.write_json(f"{CREATED_PREFIX}{s['shard']}", {"shard": s["shard"]})


def release_in_bulk(tmp_path, make_ctx, monkeypatch, submission: dict,
                    markers=shards_said_created) -> tuple[RunContext, dict, list]:
    """``release_gate`` of a bulk wave under ``submission``, every shard done creating (``markers(ctx)`` writes
    what they said); the context, the task's result and the ``(qps, burst)`` each release was sent at."""

    def in_bulk(data):
        data["test_classes"]["queue_congestion"]["submission"] = {"mode": "bulk", "shard_size": 5000, **submission}

    ctx = with_pods(make_ctx(task="release_gate", plan=write_plan(tmp_path / "bulk", change=in_bulk)))
    ctx.writer.write_json(OBSERVING_FILE, {"first_snapshot_at": "2026-12-01T09:00:00Z"})
    markers(ctx)
    rates = []

    def lift(kubeconfig, context, pods, patch, qps, burst, record):
        rates.append((qps, burst))
        api = ctx.factory.api
        return [(p, api.call("PATCH", f"/api/v1/namespaces/{p['metadata']['namespace']}/pods/"
                                      f"{p['metadata']['name']}", body=W.patch_body(patch, p))) for p in pods]

    monkeypatch.setattr(wave, "lift_gates", lift)
    return ctx, wave.release_gate(ctx, observer_wait_s=0), rates


def test_a_bulk_release_goes_at_the_combined_rate_of_the_shards_that_created_the_wave(tmp_path, make_ctx,
                                                                                      monkeypatch):
    ctx, out, rates = release_in_bulk(tmp_path, make_ctx, monkeypatch, {"qps": 40, "burst": 7})
    tenants = len({i["namespace"] for i in ctx.items})
    assert tenants == 3 and out["found"] == len(ctx.items)
    assert rates == [(40 * tenants, 7 * tenants)], "one shard per tenant: their rates together, not one shard's"


def test_a_bulk_release_goes_at_the_release_rate_the_plan_states(tmp_path, make_ctx, monkeypatch):
    _, _, rates = release_in_bulk(tmp_path, make_ctx, monkeypatch,
                                  {"qps": 40, "burst": 7, "release_qps": 900, "release_burst": 300})
    assert rates == [(900, 300)], "the stated release rate, not the shards' rates together"


def shards_listed_their_pods(ctx: RunContext) -> None:
    """Every shard's "all created" marker lists the pods it created (as ``steps.bulk`` writes it)."""
    pods = {(p["metadata"]["namespace"], wave_item(p)): p for p in ctx.factory.api.pods.values()}
    for s in shards(ctx):
        listed = {k: {"pod": pods[(s["namespace"], k)]["metadata"]["name"], "created_at": "2026-12-01T09:00:01Z"}
                  for k in s["items"]}
        ctx.writer.write_json(f"{CREATED_PREFIX}{s['shard']}", {"shard": s["shard"], "namespace": s["namespace"],
                                                                 "pods": listed})


def wave_item(pod: dict) -> str:
    return pod["metadata"]["annotations"]["gpupoc.io/item"]


def test_a_first_bulk_release_lifts_the_gates_of_the_pods_the_shards_listed_without_listing_the_wave(
        tmp_path, make_ctx, monkeypatch):
    ctx, out, _ = release_in_bulk(tmp_path, make_ctx, monkeypatch, {"qps": 40, "burst": 7},
                                  markers=shards_listed_their_pods)
    assert out["found"] == len(ctx.items) and out["missing"] == []
    assert not [c for c in ctx.factory.api.calls if c[0] == "GET" and c[1].endswith("/pods")], "the wave was listed"
    assert all(g == [] for g in gates(ctx).values()), "a listed pod kept its gate"
    rows = ctx.read_file(RELEASE_FILE)["rows"]
    assert {r["created_at"] for r in rows} == {"2026-12-01T09:00:01Z"} and all(r["by_this_try"] for r in rows)


def test_a_retried_bulk_release_lists_the_wave_to_learn_what_an_earlier_try_released(tmp_path, make_ctx,
                                                                                     monkeypatch):
    def began_before(ctx):
        shards_listed_their_pods(ctx)
        ctx.writer.write_json(RELEASING_FILE, {"at": "2026-12-01T09:00:02Z"})

    ctx, out, _ = release_in_bulk(tmp_path, make_ctx, monkeypatch, {"qps": 40, "burst": 7}, markers=began_before)
    assert out["found"] == len(ctx.items)
    assert [c for c in ctx.factory.api.calls if c[0] == "GET" and c[1].endswith("/pods")], "a retry must list"


def test_the_shards_pods_are_known_only_when_every_shard_listed_them(tmp_path):
    (tmp_path / f"{CREATED_PREFIX}0.json").write_text(json.dumps(
        {"shard": 0, "namespace": "team-a", "pods": {"a": {"pod": "a-x1", "created_at": None}}}))
    assert created_pods(tmp_path, 1) == {"a": {"pod": "a-x1", "created_at": None, "namespace": "team-a"}}
    assert created_pods(tmp_path, 2) is None, "a shard without its marker"
    (tmp_path / f"{CREATED_PREFIX}1.json").write_text(json.dumps({"shard": 1, "namespace": "team-b"}))
    assert created_pods(tmp_path, 2) is None, "a marker that lists no pods"


def test_an_item_whose_task_ended_without_a_pod_is_not_waited_for(tmp_path, make_ctx):
    from gpupoc.pipeline.open_items import TaskState

    plan = write_plan(tmp_path / "short", change=lambda d: d["test_classes"]["queue_congestion"].update(
        gate_timeout_seconds=600))
    ctx = with_pods(make_ctx(task="release_gate", plan=plan))
    gone = ctx.items[1]
    del ctx.factory.api.pods[(gone["namespace"], f"{gone['workload_key']}-x1")]  # its task failed before creating it
    states = {i["workload_key"]: TaskState.ACTIVE for i in ctx.items} | {gone["workload_key"]: TaskState.ENDED}
    out = wave.release_gate(ctx, observer_wait_s=0, task_states=lambda: states)
    assert out["missing"] == [gone["workload_key"]] and out["found"] == len(ctx.items) - 1
