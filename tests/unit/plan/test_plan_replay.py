"""A replayed class: the history's window expanded into wave items, checked against the plan, cached."""

from __future__ import annotations

import copy
import os
import shutil
from pathlib import Path

import pytest
import yaml

from gpupoc.exceptions import ConfigError
from gpupoc.plan import class_items, parse_plan
from gpupoc.plan.replay import replay_pods, replay_span_seconds, replay_wave

PLANS = Path(__file__).resolve().parents[3] / "plans"


@pytest.fixture(scope="module")
def replay_data() -> dict:
    return yaml.safe_load((PLANS / "replay.yaml").read_text())


@pytest.fixture
def data(replay_data) -> dict:
    return copy.deepcopy(replay_data)


def qc(data: dict) -> dict:
    return data["test_classes"]["queue_congestion"]


def errors_of(data: dict, base_dir: Path = PLANS) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_plan(data, "plan.yaml", base_dir=base_dir)
    return info.value.errors


def test_the_shipped_replay_plan_expands_each_job_into_one_item_per_pod_in_arrival_order(data):
    plan = parse_plan(data, "replay.yaml", base_dir=PLANS)
    wave = replay_wave(plan, "queue_congestion")
    items = class_items(plan, "queue_congestion")
    assert wave.jobs_replayed == 17 and wave.dropped == {} and wave.compression == 24
    assert len(items) == sum(i.replicas for i in wave.items) == 18
    offsets = [i.replay.at_seconds for i in items]
    assert offsets == sorted(offsets)
    assert offsets[-1] == wave.span_seconds == replay_span_seconds(plan, "queue_congestion")
    assert [i.name for i in items] == [f"qc-v-train-1g-{k:03d}" for k in range(18)]
    gang = [i for i in items if i.replay.replicas > 1]
    assert len(gang) == 2 and {i.replay.job_index for i in gang} == {gang[0].replay.job_index}
    assert [i.replay.replica for i in gang] == [0, 1] and all(i.replay.gpus == 8 and i.replay.job_gpus == 16
                                                              for i in gang)
    by_job = {i.index: i for i in wave.items}
    for item in items:
        job = by_job[item.replay.job_index]
        assert (item.tenant, item.priority_class, item.replay.pool) == (job.tenant, job.priority_class, job.pool)
        assert item.replay.history_wait_scaled_seconds == job.history_wait_scaled_seconds


def test_the_shipped_replay_wave_fits_every_tenants_quota_when_created_up_front(data):
    plan = parse_plan(data, "replay.yaml", base_dir=PLANS)
    held: dict[str, int] = {}
    for item in class_items(plan, "queue_congestion"):
        held[item.tenant] = held.get(item.tenant, 0) + item.replay.gpus
    assert held and all(g <= plan.tenant(t).quota.gpus for t, g in held.items()), held
    assert sum(held.values()) > plan.pool("training").capacity_gpus  # more than the pool: a real burst


def test_a_missing_history_names_the_field_and_the_path(data):
    qc(data)["replay"]["file"] = "history/nope.csv"
    errs = errors_of(data)
    assert len(errs) == 1 and errs[0].startswith("test_classes.queue_congestion.replay.file: job history ")
    assert "nope.csv" in errs[0] and "not found" in errs[0]


def test_a_window_without_a_job_says_what_the_history_spans(data):
    qc(data)["replay"]["window"] = "2024-01-01T00:00/2024-01-02T00:00"
    [err] = errors_of(data)
    assert err.startswith("test_classes.queue_congestion.replay.window: no job of the history in 2024-01-01")
    assert "2023-05-01T00:22:42+00:00 .. 2023-05-03T03:09:32+00:00" in err and "choose a window inside it" in err


def test_a_window_that_is_not_two_times_is_refused_with_an_example(data):
    qc(data)["replay"]["window"] = "yesterday"
    [err] = errors_of(data)
    assert err == ("test_classes.queue_congestion.replay.window: expected START/END in ISO 8601 such as "
                   "2023-05-01T00:00/2023-05-02T00:00, got 'yesterday'")


def test_a_replay_above_a_quota_names_the_tenant_the_excess_and_a_first_that_fits(data):
    del qc(data)["replay"]["window"]
    qc(data)["replay"]["first"] = 40
    errs = errors_of(data)
    nlp = next(e for e in errs if "'team-nlp'" in e)
    assert nlp.startswith("test_classes.queue_congestion.replay.first: tenant 'team-nlp' would hold ")
    held = int(nlp.split("would hold ")[1].split()[0])
    assert f"{held - 24} above its quota of 24" in nlp and "raise the tenant's quota" in nlp
    fits = int(nlp.split("; first: ")[1].split()[0])
    qc(data)["replay"]["first"] = fits
    parse_plan(data, "plan.yaml", base_dir=PLANS)  # the suggested first does fit
    qc(data)["replay"]["first"] = fits + 1
    assert errors_of(data)


def test_a_template_that_fixes_its_own_run_time_is_refused(data):
    qc(data)["replay"]["template"] = "train-2g"
    [err] = errors_of(data)
    assert err.startswith("test_classes.queue_congestion.replay.template: workload 'train-2g' fixes --duration")


def test_an_unknown_template_lists_the_catalogue(data):
    qc(data)["replay"]["template"] = "nothing"
    [err] = errors_of(data)
    assert err.startswith("test_classes.queue_congestion.replay.template: unknown workload 'nothing'; one of [")


def test_a_replayed_class_may_not_also_list_a_wave(data):
    qc(data)["wave"] = [{"workload": "v-train-1g", "tenant": "team-nlp", "count": 1}]
    assert ("test_classes.queue_congestion.wave: a replayed class takes its wave from the history; remove wave "
            "(or the replay section)") in errors_of(data)


def test_a_bad_history_row_is_reported_with_its_row_and_column(data, tmp_path):
    lines = (PLANS / "history" / "kalos-300.csv").read_text().splitlines()
    cells = lines[1].split(",")
    cells[3] = "eight"
    (tmp_path / "bad.csv").write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")
    qc(data)["replay"]["file"] = str(tmp_path / "bad.csv")
    errs = errors_of(data)
    assert any(e.startswith("test_classes.queue_congestion.replay.file: row 2 (job syn-kalos-000001), column "
                            "gpu_num") for e in errs), errs
    assert any("set skip_bad_rows: true" in e for e in errs) and not any("--skip-bad-rows" in e for e in errs)
    qc(data)["replay"]["skip_bad_rows"] = True
    parse_plan(data, "plan.yaml", base_dir=PLANS)


def test_the_expansion_is_read_once_per_file_version(data, tmp_path):
    history = tmp_path / "h.csv"
    shutil.copy(PLANS / "history" / "kalos-300.csv", history)
    qc(data)["replay"]["file"] = str(history)
    plan = parse_plan(data, "plan.yaml", base_dir=PLANS)
    first = replay_wave(plan, "queue_congestion")
    assert replay_wave(plan, "queue_congestion") is first
    assert replay_pods(plan, "queue_congestion") == replay_pods(plan, "queue_congestion")
    text = history.read_text().replace("syn-kalos-000078,", "renamed-000078,")
    history.write_text(text)
    os.utime(history, ns=(1, 1))  # another version of the file
    again = replay_wave(plan, "queue_congestion")
    assert again is not first and again.items[0].job_id == "renamed-000078"


@pytest.mark.parametrize("adapter", ["kube-scheduler", "kueue", "volcano", "kai"])
def test_a_replayed_job_of_several_nodes_is_one_gang_in_the_adapters_grouping(data, adapter):
    from gpupoc.plan.overrides import item_workload
    from gpupoc.podspec import gangs as G
    from gpupoc.podspec import labels as L
    from gpupoc.podspec.build import build_pod

    data["platform"]["adapter"] = adapter
    plan = parse_plan(data, "replay.yaml", base_dir=PLANS)
    items = class_items(plan, "queue_congestion")
    gangs = {i.gang for i in items if i.gang}
    assert len(gangs) == 1, "the history's one two-node job"
    members = [i for i in items if i.gang]
    assert [(i.replica, i.replicas, i.min_available) for i in members] == [(0, 2, 2), (1, 2, 2)]
    assert all(i.replicas == 1 and i.gang is None for i in items if i.replay.replicas == 1)
    pods = [build_pod(item_workload(plan, i), plan.tenant(i.tenant), plan, run_id="r", test_class="queue_congestion",
                      wave_gate=True, name=i.name, priority_class=i.priority_class) for i in members]
    assert len({p.metadata.labels[L.GANG] for p in pods}) == 1
    single = next(i for i in items if not i.gang)
    assert L.GANG not in build_pod(item_workload(plan, single), plan.tenant(single.tenant), plan, run_id="r",
                                   test_class="queue_congestion", wave_gate=True, name=single.name).metadata.labels
    first = members[0]
    gang = G.Gang(first.gang, G.gang_name(first.gang, "r"), first.replicas, first.min_available)
    body = G.pod_group(plan.platform.adapter, gang, item_workload(plan, first), plan.tenant(first.tenant),
                       priority_class=first.priority_class, run_id="r", test_class="queue_congestion")
    if adapter == "volcano":  # the job's 16 GPUs, not twice the template's one
        assert body["spec"]["minMember"] == 2 and body["spec"]["minResources"] == {"nvidia.com/gpu": "16"}
    elif adapter == "kai":
        assert body["spec"]["minMember"] == 2
    else:
        assert body is None
    if adapter == "kueue":
        assert all(p.metadata.annotations[G.KUEUE_GROUP_COUNT] == "2" for p in pods)
