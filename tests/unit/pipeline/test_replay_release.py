"""A replayed wave's release: each item's gate lifted at its own offset after the whole wave exists, cancels by
the tenant after the job's run, a rerun keeping the schedule (fake API, fake clock)."""

from __future__ import annotations

from datetime import timedelta

from gpupoc.common.constants import PIPELINE_GATE, RELEASED_AT
from gpupoc.pipeline import replay_release as RR

from .fake_api import T0, FakeApi, pod


class Clock:
    """A clock that moves only when the code under test sleeps."""

    def __init__(self):
        self.now = T0

    def __call__(self):
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += timedelta(seconds=max(seconds, 0.01))


class Recording(FakeApi):
    """The fake API, noting the fake time of every gate lift."""

    def __init__(self, pods, clock, **kw):
        super().__init__(pods, **kw)
        self.clock = clock
        self.lifted: dict[str, float] = {}

    def call(self, method, path, **kw):
        if method == "PATCH":
            self.lifted[path.rsplit("/", 1)[1]] = (self.clock() - T0).total_seconds()
        return super().call(method, path, **kw)


SCHEDULE = [RR.Scheduled("a", "team-a", 0.0), RR.Scheduled("b", "team-a", 5.0), RR.Scheduled("c", "team-b", 12.5)]


def test_each_item_is_released_at_its_offset_and_not_before():
    clock = Clock()
    api = Recording([pod("a-1", "team-a", "a"), pod("b-1", "team-a", "b"), pod("c-1", "team-b", "c")], clock)
    rel = RR.release_schedule(api, ["team-a", "team-b"], "sel", SCHEDULE, timeout_s=5, run_s=60, poll_s=0.5,
                              clock=clock, sleep=clock.sleep)
    assert api.lifted["a-1"] == 0.0 and 5.0 <= api.lifted["b-1"] < 5.5 and 12.5 <= api.lifted["c-1"] < 13.0
    assert all(p["spec"]["schedulingGates"] == [] for p in api.pods.values())
    rows = {r["workload_key"]: r for r in rel.rows}
    assert [rows[k]["planned_offset_seconds"] for k in "abc"] == [0.0, 5.0, 12.5]
    assert all(0 <= rows[k]["release_lag_seconds"] < 0.5 for k in "abc")
    assert rel.schedule_started_at.startswith("2026-11-30T09:00:00") and rel.unfinished == [] and not rel.errors
    assert 12.5 <= rel.release_spread_seconds < 13.0  # spread over the schedule, not all at once


def test_the_schedule_starts_only_when_every_pod_exists():
    clock = Clock()
    api = Recording([pod("a-1", "team-a", "a"), pod("b-1", "team-a", "b"), pod("c-1", "team-b", "c")], clock,
                    appear_after=3)
    started = []
    RR.release_schedule(api, ["team-a", "team-b"], "sel", SCHEDULE, timeout_s=30, run_s=60, poll_s=1.0,
                        clock=clock, sleep=clock.sleep, on_started=started.append)
    assert started and started[0] > T0
    assert api.lifted["a-1"] == (started[0] - T0).total_seconds()


def test_a_rerun_keeps_the_start_and_the_recorded_releases():
    clock = Clock()
    clock.now = T0 + timedelta(seconds=20)  # the first try started the schedule 20 s ago, then died
    done = pod("a-1", "team-a", "a", gates=())
    done["metadata"]["annotations"][RELEASED_AT] = "2026-11-30T09:00:00.100000Z"
    api = Recording([done, pod("b-1", "team-a", "b"), pod("c-1", "team-b", "c")], clock)
    rel = RR.release_schedule(api, ["team-a", "team-b"], "sel", SCHEDULE, timeout_s=5, run_s=60, started_at=T0,
                              clock=clock, sleep=clock.sleep)
    rows = {r["workload_key"]: r for r in rel.rows}
    assert "a-1" not in api.lifted and rows["a"]["release_offset_seconds"] == 0.1 and not rows["a"]["by_this_try"]
    assert rows["b"]["by_this_try"] and rows["b"]["release_lag_seconds"] == 15.0  # late, and it says so


def test_a_retry_created_gated_after_its_offset_is_released_at_once():
    clock = Clock()
    api = Recording([pod("a-1", "team-a", "a")], clock)
    sched = [RR.Scheduled("a", "team-a", 0.0), RR.Scheduled("z", "team-a", 3.0)]
    api.pods[("team-a", "z-1")] = pod("z-1", "team-a", "z")
    api.pods[("team-a", "a-2")] = pod("a-2", "team-a", "a")  # a second pod of item a (its retry), gated
    RR.release_schedule(api, ["team-a"], "sel", sched, timeout_s=5, run_s=60, clock=clock, sleep=clock.sleep)
    assert api.lifted["a-1"] == 0.0 and api.lifted["a-2"] == 0.0 and api.lifted["z-1"] >= 3.0


def test_a_cancelled_job_is_deleted_after_it_ran_its_share_and_one_that_ended_first_is_left():
    clock = Clock()
    started = (T0 + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    running = pod("a-1", "team-a", "a", gates=(), phase="Running",
                  containerStatuses=[{"name": "base", "state": {"running": {"startedAt": started}}}])
    ended = pod("b-1", "team-a", "b", gates=(), phase="Failed",
                containerStatuses=[{"name": "base", "state": {"terminated": {"startedAt": started, "exitCode": 1}}}])
    api = Recording([running, ended], clock)
    cancels = []

    def cancel(s, p):
        cancels.append((s.item, (clock() - T0).total_seconds()))
        api.call("DELETE", f"/api/v1/namespaces/{s.namespace}/pods/{p['metadata']['name']}")
        return None

    sched = [RR.Scheduled("a", "team-a", 0.0, cancel_after_seconds=4.0),
             RR.Scheduled("b", "team-a", 0.0, cancel_after_seconds=4.0)]
    rel = RR.release_schedule(api, ["team-a"], "sel", sched, timeout_s=5, run_s=60, clock=clock, sleep=clock.sleep,
                              cancel=cancel)
    assert [c[0] for c in cancels] == ["a"] and 5.0 <= cancels[0][1] < 5.6
    assert rel.cancelled[0]["workload_key"] == "a" and ("team-a", "a-1") not in api.pods
    assert {r["pod"] for r in rel.rows} == {"a-1", "b-1"}  # a deleted pod keeps its release row


def test_what_is_not_done_by_the_deadline_is_named():
    clock = Clock()
    api = Recording([pod("a-1", "team-a", "a"), pod("b-1", "team-a", "b")], clock)
    sched = [RR.Scheduled("a", "team-a", 0.0), RR.Scheduled("b", "team-a", 100.0)]
    rel = RR.release_schedule(api, ["team-a"], "sel", sched, timeout_s=5, run_s=10, clock=clock, sleep=clock.sleep)
    assert rel.unfinished == ["b"] and api.pods[("team-a", "b-1")]["spec"]["schedulingGates"] == [
        {"name": PIPELINE_GATE}]
