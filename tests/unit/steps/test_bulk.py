"""The bulk wave's shards: each tenant's items ``shard_size`` at a time, and only as many shard tasks as the
orchestrator runs at once (each holds its slot until its pods end; the release waits for every pod)."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.steps.bulk import shards
from gpupoc.steps.context import RunContext

from .conftest import RUN_ID, TC, write_plan


@pytest.fixture
def scale_ctx(tmp_path) -> RunContext:
    return RunContext(str(write_plan(tmp_path, "scale")), f"poc_{TC}", RUN_ID, TC, "bulk_shards")


def test_each_shard_holds_one_tenants_items_and_at_most_shard_size_of_them(scale_ctx):
    parts = shards(scale_ctx)
    size = scale_ctx.spec.submission.shard_size
    assert sum(len(p["items"]) for p in parts) == len(scale_ctx.items) == 10000
    assert all(len(p["items"]) <= size for p in parts)
    by_item = {i["workload_key"]: i["namespace"] for i in scale_ctx.items}
    assert all({by_item[k] for k in p["items"]} == {p["namespace"]} for p in parts)


def test_shards_that_cannot_all_run_at_once_are_refused_naming_the_shard_size_that_fits(tmp_path):
    def small_shards(data):
        data["test_classes"][TC]["submission"]["shard_size"] = 500

    ctx = RunContext(str(write_plan(tmp_path, "scale", small_shards)), f"poc_{TC}", RUN_ID, TC, "bulk_shards")
    assert len(shards(ctx)) == 21, "slots not known: not checked"
    with pytest.raises(ConfigError, match=r"shard_size: 500 makes 21 bulk shard tasks.* 12 tasks at once.*"
                                          r"raise shard_size to 1040 or more.* 23 tasks at once"):
        shards(ctx, slots=12)
    assert len(shards(ctx, slots=23)) == 21


def test_the_scale_plan_s_shards_fit_the_demo_s_airflow(scale_ctx):
    from gpupoc.airflow_runtime.settings import RuntimeSettings

    s = RuntimeSettings()
    assert shards(scale_ctx, min(s.parallelism, s.max_active_tasks))
