"""A replayed item's pod: the template workload with the job's GPUs, pool, run time, exit code and deadline."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpupoc.plan import DEFAULT_PLAN, class_items, load_plan, parse_plan
from gpupoc.plan.overrides import REPLAY_JOB_ENV, ReplayOverride, item_workload, planned_seconds
from gpupoc.plan.waves import WaveItem
from gpupoc.podspec import build_pod

PLANS = Path(__file__).resolve().parents[3] / "plans"


def override(**kw) -> ReplayOverride:
    base = dict(job_id="job-7", job_index=3, replica=0, replicas=1, gpus=4, job_gpus=4, pool="inference",
                duration_seconds=12.5, expected_exit_code=3, outcome="fail", at_seconds=9.0, task_type="pretrain")
    return ReplayOverride(**{**base, **kw})


def item(o: ReplayOverride) -> WaveItem:
    return WaveItem(test_class="queue_congestion", index=0, name="qc-v-train-1g-000", workload="v-train-1g",
                    tenant="team-serving", priority_class="gpupoc-normal", replay=o)


def env(pod) -> dict[str, str]:
    return {e.name: e.value for e in pod.spec.containers[0].env}


def test_a_replayed_pod_carries_the_jobs_gpus_pool_run_time_and_exit_code():
    plan = load_plan(DEFAULT_PLAN)
    w = item_workload(plan, item(override()))
    pod = build_pod(w, plan.tenant("team-serving"), plan, run_id="r", test_class="queue_congestion", wave_gate=True,
                    name="qc-v-train-1g-000", priority_class="gpupoc-normal")
    limits = pod.spec.containers[0].resources.limits
    assert limits["nvidia.com/gpu"] == "4" and pod.spec.node_selector == plan.pool("inference").node_selector
    e = env(pod)
    assert e["WORKLOAD_DURATION_SECONDS"] == "12.5" and e["WORKLOAD_EXIT_CODE"] == "3"
    assert e[REPLAY_JOB_ENV] == "job-7" and e["GPUPOC_TASK_TYPE"] == "pretrain"
    assert pod.spec.active_deadline_seconds is None
    assert pod.spec.containers[0].image == plan.workload("v-train-1g").image  # the template's image and memory
    assert plan.workload("v-train-1g").gpus == 1  # the catalogue is untouched


def test_a_timed_out_job_gets_a_whole_second_deadline_and_no_exit_code():
    plan = load_plan(DEFAULT_PLAN)
    o = override(expected_exit_code=None, outcome="deadline", deadline_seconds=6.2, duration_seconds=12.4)
    pod = build_pod(item_workload(plan, item(o)), plan.tenant("team-serving"), plan, run_id="r",
                    test_class="queue_congestion", wave_gate=True)
    assert pod.spec.active_deadline_seconds == 7 and "WORKLOAD_EXIT_CODE" not in env(pod)
    assert planned_seconds(plan, item(o)) == 6.2  # it holds its GPUs until the deadline, not its run time


def test_a_cancelled_job_holds_its_gpus_until_its_cancel_and_a_plain_item_its_workloads_run_time():
    plan = load_plan(DEFAULT_PLAN)
    assert planned_seconds(plan, item(override(cancel_after_seconds=2.0, expected_exit_code=None))) == 2.0
    plain = class_items(plan, "queue_congestion")[0]
    assert item_workload(plan, plain) is plan.workload(plain.workload)
    assert planned_seconds(plan, plain) == plan.workload(plain.workload).duration_seconds


def test_every_item_of_the_shipped_replay_builds_a_pod_of_its_own_gpus():
    plan = parse_plan(yaml.safe_load((PLANS / "replay.yaml").read_text()), "replay.yaml", base_dir=PLANS)
    for it in class_items(plan, "queue_congestion"):
        pod = build_pod(item_workload(plan, it), plan.tenant(it.tenant), plan, run_id="r",
                        test_class="queue_congestion", wave_gate=True, name=it.name, priority_class=it.priority_class)
        assert pod.spec.containers[0].resources.requests["nvidia.com/gpu"] == str(it.replay.gpus)
        assert pod.spec.priority_class_name == it.priority_class
