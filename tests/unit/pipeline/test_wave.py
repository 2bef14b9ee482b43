"""The wave on the cluster: prepare, release all gates at once, observe, read moments back (fake API)."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone

from gpupoc.pipeline import wave
from gpupoc.pipeline.common import PIPELINE_GATE, RELEASED_AT, repo_root
from gpupoc.pipeline.k8s import Response
from gpupoc.pipeline.operator import load_plan_file
from gpupoc.podspec import labels as L

PLAN = load_plan_file(repo_root() / "plans" / "default.yaml")
T0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


def pod(name, ns, item, gates=(PIPELINE_GATE,), created=T0, **status):
    return {"metadata": {"name": name, "namespace": ns, "creationTimestamp": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
                         "labels": {L.RUN_ID: "r1"}, "annotations": {L.ITEM: item}},
            "spec": {"schedulingGates": [{"name": g} for g in gates],
                     "containers": [{"name": "base", "resources": {"limits": {"nvidia.com/gpu": "4"}}}]},
            "status": {"phase": "Pending", **status}}


class FakeApi:
    """Namespaced pod lists, strategic-merge gate removal and events, recording every call."""

    context = "admin"

    def __init__(self, pods, appear_after=0, events=()):
        self.pods = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}
        self.hidden = appear_after
        self.events = list(events)
        self.calls = []

    def call(self, method, path, *, query=None, body=None, content_type=None, timeout=None):
        self.calls.append((method, path, content_type, copy.deepcopy(body)))
        parts = path.strip("/").split("/")
        if method == "GET" and parts[-1] == "pods":
            ns = parts[3]
            visible = [p for (n, _), p in self.pods.items() if n == ns]
            if self.hidden:
                self.hidden -= 1
                visible = visible[:1]
            return Response(200, {"kind": "PodList", "items": copy.deepcopy(visible)})
        if method == "GET" and parts[-1] == "events":
            return Response(200, {"items": [e for e in self.events if e["metadata"]["namespace"] == parts[3]]})
        if method == "PATCH":
            p = self.pods[(parts[3], parts[5])]
            drop = {g["name"] for g in body["spec"]["schedulingGates"] if g.get("$patch") == "delete"}
            p["spec"]["schedulingGates"] = [g for g in p["spec"]["schedulingGates"] if g["name"] not in drop]
            p["metadata"]["annotations"].update(body["metadata"]["annotations"])
            return Response(200, p)
        if method == "DELETE":
            return Response(200 if self.pods.pop((parts[3], parts[5]), None) else 404, {})
        return Response(404, {"kind": "Status", "message": "not found"})


def test_prepare_wave_gives_small_dicts_with_the_tenants_identity():
    tasks = wave.prepare_wave(PLAN, "queue_congestion")
    assert len(tasks) == 20
    assert all(set(t) == {"workload_key", "name", "namespace", "cluster_context"} for t in tasks)
    serving = [t for t in tasks if t["namespace"] == "team-serving"]
    assert serving and all(t["cluster_context"] == "team-serving" for t in serving)
    assert len({t["workload_key"] for t in tasks}) == 20


def test_over_quota_items_are_left_to_the_isolation_probes():
    keys = {t["workload_key"] for t in wave.prepare_wave(PLAN, "tenant_isolation")}
    assert len(keys) == 8 and not any("over" in k for k in keys)
    faults = wave.prepare_wave(PLAN, "fault_recovery", roles=("wave", "injection"))
    assert len(faults) == 5


def test_release_waits_for_every_pod_then_lifts_only_the_pipeline_gate_of_all_at_once():
    pods = [pod("a-x1", "team-a", "a"), pod("b-x2", "team-a", "b", gates=(PIPELINE_GATE, "kueue.x-k8s.io/admission")),
            pod("c-x3", "team-b", "c", created=T0 + timedelta(seconds=4))]
    api = FakeApi(pods, appear_after=2)
    rel = wave.release_wave(api, ["team-a", "team-b"], "sel", ["a", "b", "c"], timeout_s=30, poll_s=0,
                            clock=lambda: T0 + timedelta(seconds=10), sleep=lambda s: None)
    patches = [c for c in api.calls if c[0] == "PATCH"]
    assert len(patches) == 3 and all(c[2] == wave.STRATEGIC for c in patches)
    assert rel.missing == [] and rel.found == 3
    assert api.pods[("team-a", "b-x2")]["spec"]["schedulingGates"] == [{"name": "kueue.x-k8s.io/admission"}]
    assert rel.arrival_spread_seconds == 4 and rel.release_spread_seconds == 0
    assert all(r["by_this_try"] for r in rel.rows)
    assert api.pods[("team-b", "c-x3")]["metadata"]["annotations"][RELEASED_AT].startswith("2026-11-30T09:00:10")


def test_a_rerun_keeps_the_first_release_time_and_patches_nothing():
    released = pod("a-x1", "team-a", "a", gates=())
    released["metadata"]["annotations"][RELEASED_AT] = "2026-11-30T09:00:05.000000Z"
    api = FakeApi([released])
    rel = wave.release_wave(api, ["team-a"], "sel", ["a"], timeout_s=5, poll_s=0, sleep=lambda s: None)
    assert not [c for c in api.calls if c[0] == "PATCH"]
    assert rel.rows[0]["released_at"] == "2026-11-30T09:00:05.000000Z" and rel.rows[0]["by_this_try"] is False


def test_release_after_the_timeout_releases_what_exists_and_names_the_missing():
    api = FakeApi([pod("a-x1", "team-a", "a")])
    rel = wave.release_wave(api, ["team-a"], "sel", ["a", "zz"], timeout_s=0, poll_s=0, sleep=lambda s: None)
    assert rel.missing == ["zz"] and rel.found == 1 and rel.all_exist_at is None
    assert api.pods[("team-a", "a-x1")]["spec"]["schedulingGates"] == []


def test_a_snapshot_carries_the_condition_and_the_failed_scheduling_event():
    msg = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    p = pod("a-x1", "team-a", "a", gates=(),
            conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": msg}])
    ev = {"metadata": {"namespace": "team-a", "uid": "1"}, "involvedObject": {"name": "a-x1"}, "type": "Warning",
          "reason": "FailedScheduling", "message": msg, "lastTimestamp": "2026-11-30T09:00:03Z"}
    obs, _ = wave.observe_once(FakeApi([p], events=[ev]), ["team-a"], "sel", PLAN)
    o = obs[0]
    assert (o.reason, o.message, o.event_reason) == ("Unschedulable", msg, "FailedScheduling")
    rows = wave.snapshot_rows(obs, {"team-a": "team-a"}, "kubernetes-api")
    assert rows[0]["reason"] == "Unschedulable" and rows[0]["message"] == msg


def test_moments_come_from_the_pod_status():
    p = pod("a-x1", "team-a", "a", gates=(), phase="Succeeded",
            conditions=[{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-30T09:00:12Z"}],
            containerStatuses=[{"name": "base", "state": {"terminated": {
                "exitCode": 0, "reason": "Completed", "startedAt": "2026-11-30T09:00:13Z",
                "finishedAt": "2026-11-30T09:00:43Z"}}}])
    mo = wave.pod_moments(p)
    assert mo["scheduled_at"] == T0 + timedelta(seconds=12) and mo["finished_at"] == T0 + timedelta(seconds=43)
    assert (mo["exit_code"], mo["reason"]) == (0, "Completed")


def test_delete_tolerates_pods_already_gone():
    api = FakeApi([pod("a-x1", "team-a", "a")])
    assert wave.delete_pods(api, [pod("a-x1", "team-a", "a"), pod("gone", "team-a", "g")]) == []


def test_a_pod_gone_before_collection_keeps_its_row_with_the_last_seen_reason():
    from gpupoc.pipeline.congestion import Observation

    items = wave.prepare_wave(PLAN, "queue_congestion")
    first, second = items[0]["workload_key"], items[1]["workload_key"]
    present = [pod(f"{first}-aaaa1111", items[0]["namespace"], first, gates=())]
    obs = [Observation(taken_at=T0, pod=f"{second}-bbbb2222", namespace=items[1]["namespace"], phase="Running",
                       node="training-node-1", event_reason="Preempted",
                       event_message="Preempted by pod 1234 on node training-node-1")]
    rows = wave.gone_rows(PLAN, "queue_congestion", [first, second, items[2]["workload_key"]], present, obs)
    by_phase = {r["phase"]: r for r in rows}
    assert set(by_phase) == {"Deleted", "NotCreated"}
    assert by_phase["Deleted"]["reason"] == "Preempted" and by_phase["Deleted"]["pod"] == f"{second}-bbbb2222"
    assert by_phase["NotCreated"]["pod"] == items[2]["workload_key"]


def test_scheduling_events_become_observations_at_their_first_and_last_moment():
    def event(name, reason, first, last, message="0/3 nodes are available: 3 Insufficient nvidia.com/gpu."):
        return {"metadata": {"namespace": "team-nlp"}, "involvedObject": {"kind": "Pod", "name": name},
                "reason": reason, "message": message, "type": "Warning",
                "firstTimestamp": first.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "lastTimestamp": last.strftime("%Y-%m-%dT%H:%M:%SZ")}

    api = FakeApi([], events=[event("p1", "FailedScheduling", T0, T0 + timedelta(seconds=9)),
                              event("p1", "Pulled", T0, T0),
                              event("other", "FailedScheduling", T0, T0)])
    obs = wave.scheduling_event_observations(api, ["team-nlp"], {"p1"})
    assert [(o.taken_at, o.pod, o.event_reason) for o in obs] == [
        (T0, "p1", "FailedScheduling"), (T0 + timedelta(seconds=9), "p1", "FailedScheduling")]
    assert all("Insufficient nvidia.com/gpu" in o.event_message and o.node is None for o in obs)
