"""The observer: snapshots with the platform's own words, and an end as soon as every item has an outcome."""

from __future__ import annotations

from datetime import timedelta

from gpupoc.pipeline import observe
from gpupoc.pipeline.attempts import Evidence
from gpupoc.pipeline.open_items import Policy, TaskState, TaskView
from gpupoc.pipeline.timelines import Observation
from gpupoc.pipeline.workload_outcome import Deletion

from .fake_api import PLAN, T0, FakeApi, pod

MSG = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."


def ev(name, reason, message, ns="team-a", at=T0):
    return {"metadata": {"namespace": ns, "uid": f"{name}-{reason}"}, "involvedObject": {"name": name, "namespace": ns},
            "type": "Warning" if reason == "FailedScheduling" else "Normal", "reason": reason, "message": message,
            "firstTimestamp": at.strftime("%Y-%m-%dT%H:%M:%SZ"), "lastTimestamp": at.strftime("%Y-%m-%dT%H:%M:%SZ")}


def done(name, ns, item, phase="Succeeded"):
    return pod(name, ns, item, gates=(), phase=phase)


def test_a_snapshot_carries_the_condition_the_failed_scheduling_event_and_the_item():
    p = pod("a-x1", "team-a", "a", gates=(),
            conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": MSG}])
    snap = observe.observe_once(FakeApi([p], events=[ev("a-x1", "FailedScheduling", MSG)]), ["team-a"], "sel", PLAN)
    o = snap.observations[0]
    assert (o.reason, o.message, o.event_reason, o.item) == ("Unschedulable", MSG, "FailedScheduling", "a")
    rows = observe.snapshot_rows(snap.observations, {"team-a": "team-a"}, "kubernetes-api")
    assert rows[0]["reason"] == "Unschedulable" and rows[0]["message"] == MSG


def test_a_look_is_dated_when_it_began_not_when_its_lists_answered():
    class Clocked(FakeApi):
        def call(self, method, path, **kw):
            if method == "GET" and path.endswith("/pods"):
                self.now += timedelta(seconds=20)  # a list of thousands of pods answers late
            return super().call(method, path, **kw)

    api = Clocked([pod("a-x1", "team-a", "a"), pod("b-x1", "team-b", "b")])
    api.now = T0
    snap = observe.observe_once(api, ["team-b", "team-a"], "sel", PLAN, clock=lambda: api.now)
    assert {o.pod: o.taken_at for o in snap.observations} == {"a-x1": T0, "b-x1": T0}, "one snapshot, one moment"


def test_each_waiting_observation_gets_its_own_most_telling_text_when_a_pod_says_the_same_again():
    said = [("Unschedulable", MSG, None, None), ("Unschedulable", "Pod is pending.", "FailedScheduling", MSG),
            ("Unschedulable", "Pod is pending.", None, None), ("Unschedulable", MSG, None, None), (None, None, None, "")]
    obs = [Observation(taken_at=T0 + timedelta(seconds=3 * i), pod=p, namespace="team-a", reason=r, message=m,
                       event_reason=er, event_message=em)
           for i, (r, m, er, em) in enumerate(said) for p in ("a-x1", "b-x1")]
    rows = observe.snapshot_rows(obs, {"team-a": "team-a"}, "kubernetes-api")
    ctx = observe.contexts([], observe.ClusterNames())
    assert [(r["reason"], r["message"]) for r in rows] == [o.explanation(ctx(o.namespace, o.pod)) for o in obs]
    assert [r["message"] for r in rows[:6:2]] == [MSG, MSG, "Pod is pending."], "judged for what each one says"


def test_an_observation_survives_its_json_round_trip():
    o = Observation(taken_at=T0, pod="p", namespace="n", gates=("g",), eta=T0 + timedelta(seconds=5), item="i")
    assert Observation.from_dict(o.to_dict()) == o


def test_listed_events_each_name_their_namespace_and_only_one_answered_without_it_is_copied():
    class NoNamespace(FakeApi):
        def call(self, method, path, **kw):
            r = super().call(method, path, **kw)
            if method == "GET" and path.endswith("/events"):
                for e in r.body["items"]:
                    if e["reason"] == "Pulled":
                        e["metadata"].pop("namespace")
            return r

    api = NoNamespace([], events=[ev("p1", "FailedScheduling", MSG, ns="team-nlp"),
                                  ev("p1", "Pulled", "", ns="team-nlp")])
    told, pulled = observe.list_events(api, ["team-nlp"])
    assert told["metadata"]["namespace"] == pulled["metadata"]["namespace"] == "team-nlp"
    assert told is api.events[0], "an event that names its namespace is copied"
    assert "namespace" not in api.events[1]["metadata"], "the answer's own event was changed"


def test_scheduling_events_become_observations_at_their_first_and_last_moment():
    def event(name, reason, first, last):
        e = ev(name, reason, MSG, ns="team-nlp", at=first)
        e["lastTimestamp"] = last.strftime("%Y-%m-%dT%H:%M:%SZ")
        return e

    api = FakeApi([], events=[event("p1", "FailedScheduling", T0, T0 + timedelta(seconds=9)),
                              event("p1", "Pulled", T0, T0), event("other", "FailedScheduling", T0, T0)])
    obs = observe.scheduling_event_observations(observe.list_events(api, ["team-nlp"]), {"p1"})
    assert [(o.taken_at, o.pod, o.event_reason) for o in obs] == [
        (T0, "p1", "FailedScheduling"), (T0 + timedelta(seconds=9), "p1", "FailedScheduling")]


def test_a_kueue_workloads_pending_event_counts_for_its_pod_and_a_pod_groups_for_every_member():
    def on_workload(name, message):
        e = ev(name, "Pending", message, ns="team-nlp")
        e["involvedObject"]["kind"] = "Workload"
        return e

    api = FakeApi([], events=[on_workload("pod-p1-1a2b3", "couldn't assign flavors"),
                              on_workload("train-2x8g-9f8e7", "insufficient quota"),
                              on_workload("pod-other-1a2b3", "not a wave pod"), on_workload("pod-p1", "no hash")])
    obs = observe.scheduling_event_observations(observe.list_events(api, ["team-nlp"]), {"p1", "g-0", "g-1"},
                                                {"train-2x8g": {"g-0", "g-1"}})
    assert sorted((o.pod, o.event_message) for o in obs) == [
        ("g-0", "insufficient quota"), ("g-1", "insufficient quota"), ("p1", "couldn't assign flavors")]


class Script:
    """Runs one step of a scenario at each of the observer's sleeps."""

    def __init__(self, api, steps):
        self.api, self.steps, self.sleeps = api, list(steps), 0

    def __call__(self, _seconds):
        self.sleeps += 1
        if self.steps:
            self.steps.pop(0)(self.api)


def test_the_observer_ends_as_soon_as_every_item_has_an_outcome():
    api = FakeApi([pod("a-1", "team-a", "a", gates=()), pod("b-1", "team-a", "b", gates=())])
    script = Script(api, [lambda a: a.pods.update({("team-a", "a-1"): done("a-1", "team-a", "a")}),
                          lambda a: a.pods.update({("team-a", "b-1"): done("b-1", "team-a", "b", "Failed")})])
    seen = []
    res = observe.observe_wave(api, ["team-a"], "sel", {"a": "team-a", "b": "team-a"}, interval_s=1, timeout_s=60,
                               sleep=script, on_waiting=lambda open_, left: seen.append([o.item for o in open_]))
    assert script.sleeps == 2 and res.open == []
    assert seen == [["a", "b"], ["b"]]


class SlowList(FakeApi):
    """Each pod list takes 4 s of ``now``; the pod ends at the observer's second sleep."""

    def __init__(self, pods):
        super().__init__(pods)
        self.now, self.slept = 0.0, []

    def call(self, method, path, **kw):
        if method == "GET" and path.endswith("/pods"):
            self.now += 4.0  # a list of thousands of pods
        return super().call(method, path, **kw)

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds
        if len(self.slept) == 2:
            self.pods.update({("team-a", "a-1"): done("a-1", "team-a", "a")})


def test_a_look_that_takes_seconds_is_counted_in_the_interval_not_added_to_it():
    for interval, sleeps in ((10, [6.0, 6.0]), (3, [0.0, 0.0])):  # a look longer than the interval: the next at once
        api = SlowList([pod("a-1", "team-a", "a", gates=())])
        observe.observe_wave(api, ["team-a"], "sel", {"a": "team-a"}, interval_s=interval, timeout_s=600,
                             sleep=api.sleep, monotonic=lambda: api.now)
        assert api.slept == sleeps


def test_a_preempted_item_is_awaited_until_its_next_attempt_ends():
    api = FakeApi([pod("a-1", "team-a", "a", gates=())])
    preempted = ev("a-1", "Preempted", "Preempted by pod 1234 on node training-node-1")

    def preempt(a):
        a.pods.clear()
        a.events.append(preempted)

    def resubmit(a):
        a.pods[("team-a", "a-2")] = pod("a-2", "team-a", "a", gates=(), created=T0 + timedelta(seconds=20))

    script = Script(api, [preempt, lambda a: None, resubmit,
                          lambda a: a.pods.update({("team-a", "a-2"): done("a-2", "team-a", "a")})])
    res = observe.observe_wave(api, ["team-a"], "sel", {"a": "team-a"}, interval_s=1, timeout_s=60,
                               policy=Policy(limit=2, wait_s=600), sleep=script)
    assert res.open == [] and res.seen["a"] == ["a-1", "a-2"] and script.sleeps == 4
    assert ("team-a", "a-1") in res.last_seen, "the vanished attempt keeps its last state"
    assert [(a.item, a.after, a.came) for a in res.awaited.values()] == [("a", "a-1", True)]


def test_a_preempted_item_whose_task_ended_is_not_awaited_whatever_the_policy():
    api = FakeApi([pod("a-1", "team-a", "a", gates=())])
    script = Script(api, [lambda a: (a.pods.clear(), a.events.append(ev("a-1", "Preempted", "Preempted by pod x")))])
    ended = TaskView(states={"a": TaskState.ENDED})
    res = observe.observe_wave(api, ["team-a"], "sel", {"a": "team-a"}, interval_s=1, timeout_s=60,
                               policy=Policy(limit=2, wait_s=600), tasks=lambda: ended, sleep=script)
    assert res.open == [] and script.sleeps == 1 and not res.awaited


def test_the_audit_log_tells_the_observer_a_silent_vanishing_was_a_preemption():
    """No event says why the pod went (events-dropped): the audit log's delete by the scheduler does."""
    api = FakeApi([pod("a-1", "team-a", "a", gates=())])
    said = Evidence(deletions={("team-a", "a-1"): [Deletion("system:kube-scheduler", T0)]})
    script = Script(api, [lambda a: a.pods.clear(), lambda a: a.pods.update(
        {("team-a", "a-2"): pod("a-2", "team-a", "a", gates=(), created=T0 + timedelta(seconds=20))}),
        lambda a: a.pods.update({("team-a", "a-2"): done("a-2", "team-a", "a")})])
    res = observe.observe_wave(api, ["team-a"], "sel", {"a": "team-a"}, interval_s=1, timeout_s=60,
                               policy=Policy(limit=1), records=lambda events: said, sleep=script)
    assert res.seen["a"] == ["a-1", "a-2"] and res.open == []
    assert [a.came for a in res.awaited.values()] == [True]


def test_a_preempted_item_without_attempts_left_ends_at_once():
    api = FakeApi([pod("a-1", "team-a", "a", gates=())])
    script = Script(api, [lambda a: (a.pods.clear(), a.events.append(ev("a-1", "Preempted", "Preempted by pod x")))])
    res = observe.observe_wave(api, ["team-a"], "sel", {"a": "team-a"}, interval_s=1, timeout_s=60,
                               policy=Policy(limit=0), sleep=script)
    assert res.open == [] and script.sleeps == 1


def test_a_vanished_pod_nothing_explains_is_not_awaited():
    api = FakeApi([pod("a-1", "team-a", "a", gates=())])
    script = Script(api, [lambda a: a.pods.clear()])
    res = observe.observe_wave(api, ["team-a"], "sel", {"a": "team-a"}, interval_s=1, timeout_s=60,
                               policy=Policy(limit=3), sleep=script)
    assert res.open == [] and script.sleeps == 1


def test_at_its_deadline_the_observer_names_the_items_still_open():
    api = FakeApi([pod("a-1", "team-a", "a", gates=())])
    res = observe.observe_wave(api, ["team-a"], "sel", {"a": "team-a", "b": "team-a"}, interval_s=1, timeout_s=0,
                               sleep=lambda s: None)
    assert sorted(o.item for o in res.open) == ["a", "b"]
    assert "created" in next(o.waiting_for for o in res.open if o.item == "b")


def test_a_retried_observer_goes_on_from_the_pods_its_earlier_try_saw():
    """A pod that vanished while the observer was restarting keeps its place: the item is not awaited as if
    its pod had never been created."""
    gone = pod("a-1", "team-a", "a", gates=())
    api = FakeApi([], events=[ev("a-1", "Preempted", "Preempted by pod x")])
    res = observe.observe_wave(api, ["team-a"], "sel", {"a": "team-a"}, interval_s=1, timeout_s=60,
                               policy=Policy(limit=0), sleep=lambda s: None, seen_before=[gone])
    assert res.open == [] and res.seen == {"a": ["a-1"]}
    fresh = observe.observe_wave(api, ["team-a"], "sel", {"a": "team-a"}, interval_s=1, timeout_s=0,
                                 sleep=lambda s: None)
    assert [o.waiting_for for o in fresh.open] == ["its pod to be created"]


class RefusedOnce(FakeApi):
    """The first pod list is refused for longer than the retry policy waits (the caller gives up)."""

    def __init__(self, pods):
        super().__init__(pods)
        self.refused = 0

    def call(self, method, path, **kw):
        if method == "GET" and path.endswith("/pods") and not self.refused:
            from gpupoc.common.api_retry import ApiGaveUp

            self.refused += 1
            raise ApiGaveUp(f"GET {path} (context admin)", "HTTP 429 (Too many requests) after 10 send(s)",
                            "lower the plan's submission qps", 429)
        return super().call(method, path, **kw)


def test_a_look_the_api_server_refused_too_long_is_missed_and_the_next_look_decides():
    api = RefusedOnce([done("a-1", "team-a", "a")])
    slept = []
    res = observe.observe_wave(api, ["team-a"], "sel", {"a": "team-a"}, interval_s=5, timeout_s=60,
                               sleep=slept.append)
    assert api.refused == 1 and res.open == [] and slept == [5]
    assert len(res.missed_looks) == 1 and "HTTP 429" in res.missed_looks[0] and "fix:" in res.missed_looks[0]


def test_a_look_refused_too_long_at_the_deadline_ends_the_observer_with_the_clear_error():
    import pytest

    from gpupoc.common.api_retry import ApiGaveUp

    api = RefusedOnce([done("a-1", "team-a", "a")])
    with pytest.raises(ApiGaveUp, match="HTTP 429"):
        observe.observe_wave(api, ["team-a"], "sel", {"a": "team-a"}, interval_s=5, timeout_s=0,
                             sleep=lambda s: None)


def test_a_rest_between_looks_ends_once_a_pod_of_every_open_item_ended():
    from gpupoc.pipeline.observe import WAKE_POLL_SECONDS, rest

    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    ended: set[str] = set()

    def ended_now() -> set[str]:
        if now[0] >= 2.0:
            ended.update({"a", "b"})
        return ended

    rest(15.0, lambda: {"a", "b"} <= ended_now(), sleep, lambda: now[0])
    assert 2.0 <= now[0] < 2.0 + WAKE_POLL_SECONDS + 1e-9, "the rest went on after every open item's pod ended"
    now[0], slept[:] = 0.0, []
    rest(15.0, lambda: False, sleep, lambda: now[0])
    assert now[0] == 15.0, "an open item whose pod has not ended keeps the interval"
    now[0], slept[:] = 0.0, []
    rest(15.0, None, sleep, lambda: now[0])
    assert slept == [15.0], "without a watch's record the rest is one sleep"
