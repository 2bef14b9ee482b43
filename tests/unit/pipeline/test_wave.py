"""The wave on the cluster: prepare, release all gates at once, observe, read moments back (fake API)."""

from __future__ import annotations

from datetime import timedelta

from gpupoc.pipeline import wave
from gpupoc.common.constants import PIPELINE_GATE, RELEASED_AT

from .fake_api import PLAN, T0, FakeApi, pod


def test_prepare_wave_gives_small_dicts_with_the_tenants_identity():
    tasks = wave.prepare_wave(PLAN, "queue_congestion")
    expected = sum(e.count for e in PLAN.test_classes.queue_congestion.wave)
    assert len(tasks) == expected
    assert all(set(t) == {"workload_key", "name", "namespace", "cluster_context"} for t in tasks)
    serving = [t for t in tasks if t["namespace"] == "team-serving"]
    assert serving and all(t["cluster_context"] == "team-serving" for t in serving)
    assert len({t["workload_key"] for t in tasks}) == expected


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


def test_delete_tolerates_pods_already_gone():
    api = FakeApi([pod("a-x1", "team-a", "a")])
    assert wave.delete_pods(api, [pod("a-x1", "team-a", "a"), pod("gone", "team-a", "g")]) == []


def test_the_release_says_it_begins_after_every_pod_exists_and_before_the_first_gate_is_lifted():
    api = FakeApi([pod("a-x1", "team-a", "a"), pod("b-x2", "team-a", "b")], appear_after=2)
    seen: list[int] = []
    wave.release_wave(api, ["team-a"], "sel", ["a", "b"], timeout_s=30, poll_s=0, sleep=lambda s: None,
                      on_lifting=lambda: seen.append(len([c for c in api.calls if c[0] == "PATCH"])))
    assert seen == [0] and len([c for c in api.calls if c[0] == "PATCH"]) == 2


def test_a_wave_its_submitters_said_they_created_is_released_without_a_list():
    api = FakeApi([pod("a-x1", "team-a", "a"), pod("b-x2", "team-b", "b")])
    created = {"a": {"pod": "a-x1", "namespace": "team-a", "created_at": "2026-11-30T09:00:00Z"},
               "b": {"pod": "b-x2", "namespace": "team-b", "created_at": "2026-11-30T09:00:03Z"},
               "gone": {"pod": "gone-x3", "namespace": "team-a", "created_at": "2026-11-30T09:00:01Z"}}
    rel = wave.release_wave(api, ["team-a", "team-b"], "sel", ["a", "b", "gone", "refused"], timeout_s=30,
                            poll_s=0, sleep=lambda s: None, created=created,
                            clock=lambda: T0 + timedelta(seconds=10))
    assert not [c for c in api.calls if c[0] == "GET"], "the wave was listed although its pods were known"
    assert len([c for c in api.calls if c[0] == "PATCH"]) == 3
    assert api.pods[("team-b", "b-x2")]["spec"]["schedulingGates"] == []
    assert rel.missing == ["refused"] and rel.found == 3 and rel.all_exist_at is None
    assert rel.arrival_spread_seconds == 3, "arrivals from the creations' own timestamps"
    assert [e.split(":")[0] for e in rel.errors] == ["team-a/gone-x3"] and "404" in rel.errors[0]
    by_item = {r["workload_key"]: r for r in rel.rows}
    assert by_item["a"]["by_this_try"] and not by_item["gone"]["by_this_try"] and by_item["gone"]["released_at"] is None


def test_a_gate_lifted_late_by_the_harness_is_released_when_its_patch_was_sent_not_when_the_release_began():
    """A pod whose patch the release sends again (a 429, a lost answer) starts its wait at that send: the
    harness's own lag before the gate came off is not counted as the platform's wait."""
    api = FakeApi([pod("a-x1", "team-a", "a"), pod("b-x2", "team-a", "b")])
    ticks = iter(range(100))
    clock = lambda: T0 + timedelta(seconds=next(ticks))  # noqa: E731 - each call a second later

    def lift_all(pods, patch):
        out = []
        for p in pods:
            body = wave.patch_body(patch, p)
            if p["metadata"]["name"] == "b-x2":  # refused once: sent again 15 s later with a new stamp
                for _ in range(14):
                    clock()
                body = wave.patch_body(patch, p)
            out.append((p, api.call("PATCH", f"/api/v1/namespaces/team-a/pods/{p['metadata']['name']}",
                                    body=body, content_type=wave.STRATEGIC)))
        return out

    rel = wave.release_wave(api, ["team-a"], "sel", ["a", "b"], timeout_s=5, poll_s=0, sleep=lambda s: None,
                            clock=clock, lift_all=lift_all)
    at = {r["workload_key"]: r["released_at"] for r in rel.rows}
    stored = {k[1]: p["metadata"]["annotations"][RELEASED_AT] for k, p in api.pods.items()}
    assert at["b"] > at["a"], f"the late lift kept the release's start: {at}"
    assert stored["b-x2"] == at["b"] and stored["a-x1"] == at["a"], "the pod's annotation and the row agree"


def test_a_patch_given_as_a_dict_is_sent_as_it_is():
    body = wave.release_patch(T0)
    assert wave.patch_body(body, {"metadata": {"name": "x"}}) is body
