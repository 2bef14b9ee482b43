"""The observer's observations kept in parts: each save writes only what is new, and they read back whole, in
order, with a run saved whole by an earlier version read first."""

from __future__ import annotations

from datetime import timedelta

from gpupoc.pipeline.timelines import Observation
from gpupoc.steps.observation_parts import ObservationParts, part_numbers, read_observations

from ..pipeline.fake_api import T0


def _obs(i: int) -> Observation:
    return Observation(taken_at=T0 + timedelta(seconds=i), pod=f"p{i}", namespace="team-a", item=f"i{i}")


def test_each_save_writes_only_the_observations_since_the_last_and_they_read_back_whole(make_ctx):
    ctx = make_ctx(task="observe")
    parts = ObservationParts.resumed(ctx)
    parts.kept.extend([_obs(0), _obs(1)])
    parts.save()
    parts.save()  # nothing new: no part
    parts.kept.append(_obs(2))
    parts.save()
    assert part_numbers(ctx.writer.files_dir) == [0, 1]
    assert [d["pod"] for d in ctx.read_file("observations-1")] == ["p2"]
    assert read_observations(ctx) == [_obs(0), _obs(1), _obs(2)]


def test_a_retry_goes_on_numbering_after_the_parts_it_found_in_numeric_order(make_ctx):
    ctx = make_ctx(task="observe")
    for n in (9, 10):
        ctx.writer.write_json_items(f"observations-{n}", [_obs(n).to_dict()])
    ctx.writer.write_json_items("observations", [_obs(1).to_dict()])  # saved whole by an earlier version
    parts = ObservationParts.resumed(ctx)
    assert [o.pod for o in parts.kept] == ["p1", "p9", "p10"] and parts.next_part == 11
    parts.kept.append(_obs(11))
    parts.save()
    assert [o.pod for o in read_observations(ctx)] == ["p1", "p9", "p10", "p11"]
