"""The wave's pods as the observer's watches received them: receipts, the Scheduled event, relists."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from gpupoc.pipeline.watch_record import RELISTED, WatchedPods
from gpupoc.podspec import labels as L

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def pod(phase: str = "Pending", scheduled: bool = False, item: str = "a-1") -> dict:
    conds = [{"type": "PodScheduled", "status": "True" if scheduled else "False",
              "lastTransitionTime": "2026-01-01T00:00:01Z"}]
    return {"metadata": {"name": "p", "namespace": "ns", "annotations": {L.ITEM: item} if item else {},
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "status": {"phase": phase, "conditions": conds}}


def test_each_transition_keeps_the_moment_it_was_first_received():
    w = WatchedPods()
    on_pod = w.handler("/api/v1/namespaces/ns/pods")
    on_pod("ADDED", pod(), T0)
    on_pod("MODIFIED", pod(scheduled=True), T0 + timedelta(seconds=2))
    on_pod("MODIFIED", pod("Running", True), T0 + timedelta(seconds=3))
    on_pod("MODIFIED", pod("Running", True), T0 + timedelta(seconds=9))
    t = w.pods[("ns", "p")]
    assert t.received == {"Seen": T0, "PodScheduled": T0 + timedelta(seconds=2),
                          "Running": T0 + timedelta(seconds=3)}


def test_the_scheduled_events_time_is_kept_whichever_came_first():
    w = WatchedPods()
    w.handler("/api/v1/namespaces/ns/events")("ADDED", {
        "reason": "Scheduled", "eventTime": "2026-01-01T00:00:01.250000Z",
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns"}}, T0)
    w.handler("/api/v1/namespaces/ns/pods")("ADDED", pod(), T0)
    assert w.pods[("ns", "p")].scheduled_event_at == T0 + timedelta(seconds=1.25)


def test_a_relist_marks_the_pods_still_waiting_and_pods_without_an_item_are_not_kept():
    w = WatchedPods()
    on_pod = w.handler("/api/v1/namespaces/ns/pods")
    on_pod("ADDED", pod(), T0)
    on_pod("ADDED", pod(item=""), T0)
    on_pod(RELISTED, {}, T0)
    assert list(w.pods) == [("ns", "p")] and w.pods[("ns", "p")].relisted_waiting


def test_what_an_earlier_try_kept_is_carried_on():
    w = WatchedPods()
    w.handler("/api/v1/namespaces/ns/pods")("ADDED", pod(), T0)
    again = WatchedPods.from_dicts(w.to_dicts())
    again.handler("/api/v1/namespaces/ns/pods")("MODIFIED", pod(), T0 + timedelta(seconds=5))
    assert again.pods[("ns", "p")].received["Seen"] == T0
    assert WatchedPods().handler("/apis/apps/v1/namespaces/ns/deployments") is None


def test_the_items_whose_pod_ended_or_went_are_named_from_a_moment_on():
    w = WatchedPods()
    on_pod = w.handler("/api/v1/namespaces/ns/pods")
    on_pod("MODIFIED", pod("Running", True, item="a-1"), T0)
    on_pod("MODIFIED", pod("Succeeded", True, item="a-1"), T0 + timedelta(seconds=5))
    on_pod("DELETED", pod("Running", True, item="b-1"), T0 + timedelta(seconds=8))
    on_pod("MODIFIED", pod("Running", True, item="c-1"), T0 + timedelta(seconds=9))
    assert w.all_ended_since(["a-1", "b-1"], T0)
    assert not w.all_ended_since(["a-1", "b-1", "c-1"], T0), "a pod still running keeps its item open"
    assert not w.all_ended_since(["a-1", "b-1"], T0 + timedelta(seconds=6)), "an end before the moment does not count"
    assert w.all_ended_since(["b-1"], T0 + timedelta(seconds=6))
    assert not w.all_ended_since(["never-seen"], T0)


def test_the_last_object_of_each_wave_pod_is_kept_a_pod_gone_between_looks_included():
    w = WatchedPods()
    on_pod = w.handler("/api/v1/namespaces/ns/pods")
    on_pod("ADDED", pod(), T0)
    on_pod("MODIFIED", pod("Running", True), T0 + timedelta(seconds=1))
    on_pod("DELETED", pod("Running", True), T0 + timedelta(seconds=2))  # lost at once: no look saw it
    on_pod("ADDED", pod(item=""), T0)  # not a wave pod
    assert [p["status"]["phase"] for p in w.last_objects()] == ["Running"]
