"""A replay against its history: each job's waits side by side, and the capacity question from the queue model."""

from __future__ import annotations

from datetime import timedelta

from gpupoc.pipeline import replay_compare as RC
from gpupoc.plan.overrides import ReplayOverride
from gpupoc.plan.waves import WaveItem

from .fake_api import PLAN, T0


def items_of(jobs: list[dict]) -> list[WaveItem]:
    """Wave items of replayed jobs: (tenant, gpus per pod, pods, offset, held, history wait)."""
    out = []
    for j, job in enumerate(jobs):
        for r in range(job.get("pods", 1)):
            o = ReplayOverride(job_id=f"job-{j}", job_index=j, replica=r, replicas=job.get("pods", 1),
                               gpus=job["gpus"], job_gpus=job["gpus"] * job.get("pods", 1), pool="training",
                               duration_seconds=job["held"], expected_exit_code=0, outcome="succeed",
                               at_seconds=job["at"], task_type="replay", history_state="completed",
                               history_wait_seconds=job.get("wait", 0) * 24,
                               history_wait_scaled_seconds=job.get("wait", 0))
            out.append(WaveItem(test_class="queue_congestion", index=len(out), name=f"qc-x-{len(out):03d}",
                                workload="v-train-1g", tenant=job.get("tenant", "team-vision"),
                                priority_class=job.get("pc", "gpupoc-normal"), replay=o))
    return out


def run(item: str, released: float | None, scheduled: float | None, attempt: int = 1, final=True, outcome="succeeded"):
    at = lambda s: None if s is None else T0 + timedelta(seconds=s)  # noqa: E731
    return {"item": item, "attempt": attempt, "final_attempt": final, "released_at": at(released),
            "scheduled_at": at(scheduled), "outcome": outcome}


POOLS = {"training": 24, "inference": 8}


def test_a_jobs_platform_wait_runs_from_its_release_to_its_last_pod_scheduled():
    items = items_of([{"gpus": 8, "pods": 2, "at": 5.0, "held": 10, "wait": 3.0}, {"gpus": 1, "at": 6.0, "held": 2}])
    jobs = RC.jobs_of(PLAN, items)
    runs = [run("qc-x-000", 5.1, 6.0), run("qc-x-001", 5.2, 9.1), run("qc-x-002", 6.05, 6.05)]
    rows = RC.job_waits(jobs, runs, T0, POOLS)
    assert [r["pods"] for r in rows] == [2, 1] and rows[0]["items"] == "qc-x-000,qc-x-001"
    assert rows[0]["platform_wait_seconds"] == 4.0 and rows[0]["history_wait_scaled_seconds"] == 3.0
    assert rows[0]["release_seconds"] == 5.1 and rows[0]["release_lag_seconds"] == 0.1
    assert rows[1]["platform_wait_seconds"] == 0.0 and rows[1]["outcome"] == "succeeded"


def test_a_job_whose_pod_was_never_scheduled_has_no_platform_wait_and_a_retry_does_not_count():
    items = items_of([{"gpus": 8, "pods": 2, "at": 0.0, "held": 10}])
    runs = [run("qc-x-000", 0.0, 1.0), run("qc-x-001", 0.0, None, final=False, outcome="preempted"),
            run("qc-x-001", None, 3.0, attempt=2)]
    [row] = RC.job_waits(RC.jobs_of(PLAN, items), runs, T0, POOLS)
    assert row["platform_wait_seconds"] is None and row["outcome"] == "succeeded"


def test_the_what_if_answers_from_the_same_arrivals_and_run_times_with_more_gpus():
    # three 16-GPU jobs arriving together on 24 GPUs: two wait today, none with twice the GPUs
    items = items_of([{"gpus": 16, "at": 0.0, "held": 10, "wait": 1.0} for _ in range(3)])
    jobs = RC.jobs_of(PLAN, items)
    waits = RC.job_waits(jobs, [run(i.name, 0.0, 0.0) for i in items], T0, POOLS)
    assert sorted(w["model_wait_seconds"] for w in waits) == [0.0, 10.0, 20.0]
    cap = {c.scenario: c for c in RC.capacity(jobs, waits, POOLS, 2.0, 24)}
    assert list(cap) == ["history", "platform", "model_today", "model_what_if"]
    assert cap["model_today"].wait_p50_seconds == 10.0 and cap["model_today"].wait_p90_seconds == 18.0
    assert cap["model_what_if"].wait_max_seconds == 0.0 and cap["model_what_if"].pools == "training 48, inference 16"
    assert cap["platform"].basis == "measured" and cap["platform"].wait_max_seconds == 0.0
    assert cap["history"].wait_p50_seconds == 1.0 and "/ 24" in cap["history"].note
    assert "queue model" in cap["model_what_if"].note and cap["model_what_if"].factor == 2.0


def test_a_higher_priority_job_goes_first_in_the_model():
    items = items_of([{"gpus": 24, "at": 0.0, "held": 10}, {"gpus": 24, "at": 1.0, "held": 5, "pc": "gpupoc-low"},
                      {"gpus": 24, "at": 2.0, "held": 5, "pc": "gpupoc-high"}])
    waits = RC.model_waits(RC.jobs_of(PLAN, items), POOLS)
    assert waits == {0: 0.0, 2: 8.0, 1: 14.0}


def test_pools_scale_down_to_whole_gpus_and_never_to_none():
    assert RC.scaled_pools({"training": 24, "inference": 8}, 1.5) == {"training": 36, "inference": 12}
    assert RC.scaled_pools({"inference": 3}, 0.1) == {"inference": 1}
