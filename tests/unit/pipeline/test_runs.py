"""``workload_runs``: one row per attempt, with its moments and its outcome."""

from __future__ import annotations

from datetime import timedelta

from gpupoc.common.outcomes import WorkloadOutcome as O
from gpupoc.pipeline import runs, wave
from gpupoc.pipeline.attempts import Attempt
from gpupoc.pipeline.workload_outcome import OutcomeRecord

from .fake_api import PLAN, T0, pod


def test_moments_come_from_the_pod_status():
    p = pod("a-x1", "team-a", "a", gates=(), phase="Succeeded",
            conditions=[{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-30T09:00:12Z"}],
            containerStatuses=[{"name": "base", "state": {"terminated": {
                "exitCode": 0, "reason": "Completed", "startedAt": "2026-11-30T09:00:13Z",
                "finishedAt": "2026-11-30T09:00:43Z"}}}])
    mo = runs.pod_moments(p)
    assert mo["scheduled_at"] == T0 + timedelta(seconds=12) and mo["finished_at"] == T0 + timedelta(seconds=43)
    assert (mo["exit_code"], mo["reason"]) == (0, "Completed")


def scheduled(name, ns, item, at, priority, phase="Running"):
    p = pod(name, ns, item, gates=(), created=T0, phase=phase,
            conditions=[{"type": "PodScheduled", "status": "True",
                         "lastTransitionTime": (T0 + timedelta(seconds=at)).strftime("%Y-%m-%dT%H:%M:%SZ")}])
    p["spec"]["priority"] = priority
    return p


def test_each_attempt_is_a_row_the_first_waits_from_the_release_and_a_preemption_names_a_higher_preemptor():
    items = wave.prepare_wave(PLAN, "queue_congestion")
    low = next(i for i in items if "sweep" in i["workload_key"])
    high = next(i for i in items if "8g" in i["workload_key"])
    ns_low, ns_high = low["namespace"], high["namespace"]
    victim = scheduled("low-1", ns_low, low["workload_key"], 2, 100)
    preemptor = scheduled("high-1", ns_high, high["workload_key"], 9, 10000, "Succeeded")
    retry = scheduled("low-2", ns_low, low["workload_key"], 40, 100, "Succeeded")
    attempts = [
        Attempt(low["workload_key"], 1, ns_low, "low-1", victim, False, "pipeline",
                OutcomeRecord(O.PREEMPTED, T0 + timedelta(seconds=8), f"{ns_high}/high-1", "Preempted", "by pod x",
                              "event"), requeued_by_platform=False),
        Attempt(low["workload_key"], 2, ns_low, "low-2", retry, True, "pipeline", OutcomeRecord(O.SUCCEEDED),
                final=True),
        Attempt(high["workload_key"], 1, ns_high, "high-1", preemptor, True, "pipeline", OutcomeRecord(O.SUCCEEDED),
                final=True),
    ]
    release = [{"namespace": ns_low, "pod": "low-1", "released_at": "2026-11-30T09:00:01Z"},
               {"namespace": ns_high, "pod": "high-1", "released_at": "2026-11-30T09:00:01Z"}]
    timelines, rows = runs.attempt_runs(PLAN, "queue_congestion", attempts, release)
    by = {r["pod"]: r for r in rows}
    assert (by["low-1"]["attempt"], by["low-1"]["outcome"], by["low-1"]["final_attempt"]) == (1, "preempted", False)
    assert by["low-1"]["preempted_by_higher"] is True and by["low-1"]["outcome_explained"] is True
    assert by["low-1"]["wait_seconds"] == 1.0 and by["low-1"]["finished_at"] == T0 + timedelta(seconds=8)
    assert by["low-2"]["released_at"] is None and by["low-2"]["wait_seconds"] == 40.0, \
        "a resubmission was never gated: it waits from its submission"
    assert len(timelines) == 3


def test_an_attempt_never_created_keeps_its_row_without_a_timeline():
    items = wave.prepare_wave(PLAN, "queue_congestion")
    a = Attempt(items[0]["workload_key"], 1, items[0]["namespace"], None, None, False, "pipeline",
                OutcomeRecord(O.REJECTED, T0, None, "HTTP 403", "exceeded quota", "admission"), final=True)
    timelines, rows = runs.attempt_runs(PLAN, "queue_congestion", [a], [])
    assert timelines == [] and rows[0]["outcome"] == "rejected" and "never created" in rows[0]["pod"]
    assert rows[0]["submitted_at"] == T0


def test_a_pod_last_seen_before_its_binding_takes_its_schedule_from_the_scheduled_event():
    items = wave.prepare_wave(PLAN, "queue_congestion")
    it = items[0]
    seen = pod("p-1", it["namespace"], it["workload_key"], gates=())
    ev = {"metadata": {"namespace": it["namespace"]}, "involvedObject": {"name": "p-1", "namespace": it["namespace"]},
          "reason": "Scheduled", "message": f"Successfully assigned {it['namespace']}/p-1 to training-node-2",
          "lastTimestamp": "2026-11-30T09:00:05Z"}
    a = Attempt(it["workload_key"], 1, it["namespace"], "p-1", seen, False, "pipeline",
                OutcomeRecord(O.PREEMPTED, T0 + timedelta(seconds=9), None, "Preempted", "x", "event"), final=True)
    release = [{"namespace": it["namespace"], "pod": "p-1", "released_at": "2026-11-30T09:00:01Z"}]
    timelines, rows = runs.attempt_runs(PLAN, "queue_congestion", [a], release, [ev])
    assert rows[0]["scheduled_at"] == T0 + timedelta(seconds=5) and rows[0]["node"] == "training-node-2"
    assert rows[0]["wait_seconds"] == 4.0


def test_a_replayed_items_row_carries_the_jobs_gpus_pool_and_task_type_not_its_templates():
    from pathlib import Path

    import yaml

    from gpupoc.pipeline.common import repo_root
    from gpupoc.plan import class_items, parse_plan

    data = yaml.safe_load((repo_root() / "plans" / "replay.yaml").read_text())
    util = data["test_classes"]["utilization"]
    util["replay"] = {**data["test_classes"]["queue_congestion"]["replay"], "compress": 48,
                      "window": "2023-05-01T15:00/2023-05-01T16:00"}
    del util["wave"]
    plan = parse_plan(data, "replay.yaml", base_dir=Path(repo_root() / "plans"))
    item = next(i for i in class_items(plan, "utilization") if i.replay.pool == "inference")
    ns = plan.tenant(item.tenant).namespace
    p = scheduled("u-1", ns, item.name, 3, 1000, "Succeeded")
    [row] = runs.attempt_runs(plan, "utilization", [Attempt(item.name, 1, ns, "u-1", p, True, "pipeline",
                                                            OutcomeRecord(O.SUCCEEDED), final=True)], [])[1]
    assert (row["pool"], row["task_type"], row["workload"]) == ("inference", "replay", "v-train-1g")
    assert row["gpus"] == 4  # the fake pod asks 4; without a pod the item's own GPUs count
    [bare] = runs.attempt_runs(plan, "utilization", [Attempt(item.name, 1, ns, None, None, False, "pipeline",
                                                             OutcomeRecord(O.LOST))], [])[1]
    assert bare["gpus"] == item.replay.gpus and bare["pool"] == "inference"


def test_under_a_queue_scheduler_a_preemption_by_another_tenants_queue_is_not_judged_by_priority():
    plan = PLAN.model_copy(update={"platform": PLAN.platform.model_copy(
        update={"adapter": type(PLAN.platform.adapter)("kueue")})})
    items = wave.prepare_wave(plan, "queue_congestion")
    low = next(i for i in items if "sweep" in i["workload_key"])
    other = next(i for i in items if i["namespace"] != low["namespace"])
    ns_low, ns_other = low["namespace"], other["namespace"]
    victim = scheduled("low-1", ns_low, low["workload_key"], 2, 10000)
    reclaimer = scheduled("other-1", ns_other, other["workload_key"], 9, 100, "Succeeded")
    attempts = [
        Attempt(low["workload_key"], 1, ns_low, "low-1", victim, False, "pipeline",
                OutcomeRecord(O.PREEMPTED, T0 + timedelta(seconds=8), f"{ns_other}/other-1", "Preempted",
                              "InCohortReclamation", "condition"), final=True),
        Attempt(other["workload_key"], 1, ns_other, "other-1", reclaimer, True, "pipeline",
                OutcomeRecord(O.SUCCEEDED), final=True),
    ]
    _, rows = runs.attempt_runs(plan, "queue_congestion", attempts, [])
    assert {r["pod"]: r for r in rows}["low-1"]["preempted_by_higher"] is None, \
        "a reclaim by another queue is queue policy (judged by the reclaim checks), not a priority inversion"
    _, kube_rows = runs.attempt_runs(PLAN, "queue_congestion", attempts, [])
    assert {r["pod"]: r for r in kube_rows}["low-1"]["preempted_by_higher"] is False


def _preempted_rows(by, message_source="event"):
    """A low sweep preempted on node n1 by an unnamed party, a high job placed there after, a normal job
    placed elsewhere."""
    items = wave.prepare_wave(PLAN, "queue_congestion")
    low = next(i for i in items if "sweep" in i["workload_key"])
    high = next(i for i in items if "8g" in i["workload_key"])
    victim = scheduled("low-1", low["namespace"], low["workload_key"], 2, 100)
    victim["spec"]["nodeName"] = "training-node-1"
    after = scheduled("high-1", high["namespace"], high["workload_key"], 9, 10000, "Succeeded")
    after["spec"]["nodeName"] = "training-node-1"
    return [
        Attempt(low["workload_key"], 1, low["namespace"], "low-1", victim, True, "pipeline",
                OutcomeRecord(O.PREEMPTED, T0 + timedelta(seconds=8), by, "Evict",
                              "Pod is evicted, because of preempt", message_source), final=True),
        Attempt(high["workload_key"], 1, high["namespace"], "high-1", after, True, "pipeline",
                OutcomeRecord(O.SUCCEEDED), final=True),
    ]


def test_an_unnamed_preemptor_is_not_inferred_from_a_higher_pod_placed_next_on_the_victims_node():
    _, rows = runs.attempt_runs(PLAN, "queue_congestion", _preempted_rows(None), [])
    low = {r["pod"]: r for r in rows}["low-1"]
    assert (low["preempted_by_higher"], low["preemption_judged"]) == (None, "unresolved"), \
        "a placement after a preemption names no preemptor: QC-13 is not verified for it, never passed"


def test_a_uid_named_only_in_the_victims_event_is_resolved_to_an_observed_service_replica():
    from gpupoc.pipeline.preemptors import Facts, known_pod

    attempts = _preempted_rows(None)
    attempts[0].outcome = OutcomeRecord(O.PREEMPTED, T0 + timedelta(seconds=8), None, "PreemptionByScheduler",
                                        "default-scheduler: preempting to accommodate a higher priority pod",
                                        "condition DisruptionTarget")
    ns = attempts[0].namespace
    uid = "039f34ac-5d2e-4b7a-9c1e-2f6a8b9d0e11"
    event = {"metadata": {"namespace": ns}, "involvedObject": {"kind": "Pod", "namespace": ns, "name": "low-1"},
             "reason": "Preempted", "message": f"Preempted by pod {uid} on node training-node-1",
             "lastTimestamp": "2026-11-30T09:00:08Z"}
    facts = Facts()
    facts.add(known_pod({"metadata": {"namespace": "team-serving", "name": "svc-infer-1", "uid": uid},
                         "spec": {"priority": 1_000_000, "nodeName": "training-node-1"}}))
    _, rows = runs.attempt_runs(PLAN, "queue_congestion", attempts, [], [event], facts=facts)
    low = {r["pod"]: r for r in rows}["low-1"]
    assert (low["preempted_by_higher"], low["preemptor"], low["preemptor_priority"]) == \
        (True, "team-serving/svc-infer-1", 1_000_000)
    _, alone = runs.attempt_runs(PLAN, "queue_congestion", attempts, [], [event])
    assert {r["pod"]: r for r in alone}["low-1"]["preempted_by_higher"] is None, "an unknown uid is not a failure"


def test_a_preemptor_named_outside_the_wave_is_left_unknown_not_guessed():
    _, rows = runs.attempt_runs(PLAN, "queue_congestion", _preempted_rows("uid 1234"), [])
    assert {r["pod"]: r["preempted_by_higher"] for r in rows}["low-1"] is None


def test_an_attempt_recorded_only_by_its_submission_is_known_by_name_without_a_node():
    attempts = _preempted_rows("team-x/p-9")
    items = wave.prepare_wave(PLAN, "queue_congestion")
    attempts.append(Attempt(items[0]["workload_key"], 1, "team-x", "p-9", None, False, "pipeline",
                            OutcomeRecord(O.LOST), final=True))
    _, rows = runs.attempt_runs(PLAN, "queue_congestion", attempts, [])
    low = {r["pod"]: r for r in rows}["low-1"]
    assert (low["preemptor"], low["preemption_judged"]) == ("team-x/p-9", "judged"), \
        "a pod the operator submitted is named by the platform as any other, with its item's priority"
