"""Kueue emulation: webhook mutation, Workloads, admission within nominal quota, pending reasons, positions."""

from __future__ import annotations

import re

import pytest
import yaml

from gpupoc.sim.bootstrap import bootstrap
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import DEFAULT_CONFIG, ClusterConfig
from gpupoc.sim.controllers import kueue as K
from gpupoc.sim.controllers import kueue_admit
from gpupoc.sim.controllers.scheduler import schedule_pass

TOLERATE_GPU = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
PRIO = {"gpupoc-high": 10000, "gpupoc-normal": 1000, "gpupoc-low": 100}


def make_state(tmp_path, strategy: str = "BestEffortFIFO", nominal: int = 24) -> ClusterState:
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    for cq in raw["kueue"]["cluster_queues"]:
        if cq["name"] == "training-cq":
            cq["queueing_strategy"] = strategy
            cq["nominal_gpus"] = nominal
    state = ClusterState(ClusterConfig.model_validate(raw), tmp_path)
    bootstrap(state)
    return state


def submit(state, name, gpus, queue="training", ns="team-vision", pc="gpupoc-normal", created=None, gates=()):
    """What the API server does on create: the Kueue webhook hook, store, then the after-create hook."""
    meta = {"name": name, "namespace": ns, "labels": {K.QUEUE_LABEL: queue}}
    if created:
        meta["creationTimestamp"] = created
    pod = {"metadata": meta, "spec": {
        "schedulerName": "default-scheduler", "priorityClassName": pc, "priority": PRIO[pc],
        "preemptionPolicy": "Never", "tolerations": TOLERATE_GPU,
        "containers": [{"name": "main", "image": "gpupoc/virtual:1",
                        "resources": {"limits": {"nvidia.com/gpu": str(gpus)},
                                      "requests": {"nvidia.com/gpu": str(gpus)}}}],
    }, "status": {"phase": "Pending"}}
    if gates:
        pod["spec"]["schedulingGates"] = [{"name": g} for g in gates]
    K.on_pod_create(state, pod)
    stored = state.store.create("pods", pod)
    K.after_pod_created(state, stored)
    return stored


def workload_of(state, name, ns="team-vision"):
    return next(w for w in state.store.list("workloads", ns) if w["metadata"]["ownerReferences"][0]["name"] == name)


def cond(obj, type_):
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == type_), None)


def gates(state, name, ns="team-vision"):
    return [g["name"] for g in state.store.get("pods", ns, name)["spec"].get("schedulingGates") or []]


def test_webhook_marks_the_pod_managed_and_gates_it_keeping_other_gates(tmp_path):
    state = make_state(tmp_path)
    pod = {"metadata": {"name": "p", "namespace": "team-vision", "labels": {K.QUEUE_LABEL: "training"}},
           "spec": {"schedulingGates": [{"name": "gpupoc.io/wave-release"}], "containers": []}}
    K.on_pod_create(state, pod)
    assert pod["metadata"]["labels"][K.MANAGED_LABEL] == "true"
    assert [g["name"] for g in pod["spec"]["schedulingGates"]] == ["gpupoc.io/wave-release", *K.KUEUE_GATES]


def test_pods_without_queue_label_are_left_alone(tmp_path):
    state = make_state(tmp_path)
    pod = {"metadata": {"name": "p", "namespace": "team-vision", "labels": {"app": "x"}}, "spec": {"containers": []}}
    K.on_pod_create(state, pod)
    assert pod == {"metadata": {"name": "p", "namespace": "team-vision", "labels": {"app": "x"}},
                   "spec": {"containers": []}}


def test_workload_is_created_for_the_pod(tmp_path):
    state = make_state(tmp_path)
    pod = submit(state, "train-a", 4, pc="gpupoc-high")
    wl = workload_of(state, "train-a")
    assert re.fullmatch(r"pod-train-a-[0-9a-f]{5}", wl["metadata"]["name"])
    assert wl["apiVersion"] == "kueue.x-k8s.io/v1beta1" and wl["kind"] == "Workload"
    assert wl["metadata"]["ownerReferences"][0]["uid"] == pod["metadata"]["uid"]
    assert wl["spec"]["queueName"] == "training"
    assert (wl["spec"]["priority"], wl["spec"]["priorityClassName"]) == (10000, "gpupoc-high")
    [ps] = wl["spec"]["podSets"]
    assert (ps["name"], ps["count"]) == ("main", 1)
    assert ps["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "4"


def test_workload_is_created_on_the_next_pass_when_the_api_does_not_call_after_create(tmp_path):
    state = make_state(tmp_path)
    pod = {"metadata": {"name": "late", "namespace": "team-vision", "labels": {K.QUEUE_LABEL: "training"}},
           "spec": {"containers": []}, "status": {"phase": "Pending"}}
    K.on_pod_create(state, pod)
    state.store.create("pods", pod)
    K.kueue_pass(state)
    assert workload_of(state, "late")


def test_admission_within_nominal_quota_removes_the_gate_and_adds_the_flavor_selector(tmp_path):
    state = make_state(tmp_path)
    for i in range(4):
        submit(state, f"job-{i}", 8, created=f"2026-01-01T00:00:0{i}Z")
    assert K.kueue_pass(state) == 3
    for i in range(3):
        wl = workload_of(state, f"job-{i}")
        assert cond(wl, "QuotaReserved")["status"] == "True"
        assert cond(wl, "QuotaReserved")["message"] == "Quota reserved in ClusterQueue training-cq"
        assert cond(wl, "Admitted")["status"] == "True"
        assert wl["status"]["admission"] == {"clusterQueue": "training-cq", "podSetAssignments": [
            {"name": "main", "flavors": {"nvidia.com/gpu": "training"},
             "resourceUsage": {"nvidia.com/gpu": "8"}, "count": 1}]}
        assert gates(state, f"job-{i}") == []
        selector = state.store.get("pods", "team-vision", f"job-{i}")["spec"]["nodeSelector"]
        assert selector["gpupoc.io/pool"] == "training"
    pending = workload_of(state, "job-3")
    c = cond(pending, "QuotaReserved")
    assert (c["status"], c["reason"], c["message"]) == ("False", "Pending", (
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor "
        "training, 8 more needed"))
    assert gates(state, "job-3") == list(K.KUEUE_GATES)
    assert schedule_pass(state) == 3


@pytest.mark.parametrize("every_s, count", [(3600.0, 1), (0.0, 2)])
def test_an_inadmissible_workload_gets_a_pending_warning_event_with_its_message_its_retries_aggregated(
        tmp_path, monkeypatch, every_s, count):
    monkeypatch.setattr(kueue_admit, "PENDING_EVENT_EVERY_S", every_s)
    state = make_state(tmp_path)
    for i in range(4):
        submit(state, f"job-{i}", 8, created=f"2026-01-01T00:00:0{i}Z")
    for _ in range(3):
        K.kueue_pass(state)
    wl = workload_of(state, "job-3")
    said = [e for e in state.store.list("events") if e["involvedObject"]["name"] == wl["metadata"]["name"]
            and e["reason"] == "Pending"]
    assert [(e["type"], e["message"], e["count"], e["source"]["component"]) for e in said] == [
        ("Warning", cond(wl, "QuotaReserved")["message"], count, "kueue-admission")]
    assert said[0]["involvedObject"]["kind"] == "Workload"


def test_finished_pod_releases_quota_for_the_next_workload(tmp_path):
    state = make_state(tmp_path, nominal=8)
    submit(state, "first", 8, created="2026-01-01T00:00:00Z")
    submit(state, "second", 8, created="2026-01-01T00:00:01Z")
    K.kueue_pass(state)
    assert gates(state, "second") == list(K.KUEUE_GATES)
    first = state.store.get("pods", "team-vision", "first")
    first["status"]["phase"] = "Succeeded"
    state.store.update("pods", first)
    K.kueue_pass(state)
    c = cond(workload_of(state, "first"), "Finished")
    assert (c["status"], c["reason"]) == ("True", "Succeeded")
    assert gates(state, "second") == []


def test_deleted_pod_deletes_its_workload(tmp_path):
    state = make_state(tmp_path)
    submit(state, "gone", 8)
    K.kueue_pass(state)
    state.store.delete("pods", "team-vision", "gone")
    K.kueue_pass(state)
    assert state.store.list("workloads", "team-vision") == []


def test_missing_local_queue_is_reported_on_the_workload(tmp_path):
    state = make_state(tmp_path)
    submit(state, "typo", 1, queue="trainig")
    K.kueue_pass(state)
    c = cond(workload_of(state, "typo"), "QuotaReserved")
    assert (c["status"], c["reason"], c["message"]) == ("False", "Inadmissible", "LocalQueue trainig doesn't exist")
    assert gates(state, "typo") == list(K.KUEUE_GATES)


def test_best_effort_fifo_admits_smaller_workloads_behind_a_blocked_head(tmp_path):
    state = make_state(tmp_path, strategy="BestEffortFIFO", nominal=16)
    submit(state, "running", 12, created="2026-01-01T00:00:00Z")
    submit(state, "head", 8, created="2026-01-01T00:00:01Z")
    submit(state, "small", 4, created="2026-01-01T00:00:02Z")
    K.kueue_pass(state)
    assert gates(state, "small") == []
    assert gates(state, "head") == list(K.KUEUE_GATES)


def test_strict_fifo_stops_at_the_first_workload_that_does_not_fit(tmp_path):
    state = make_state(tmp_path, strategy="StrictFIFO", nominal=16)
    submit(state, "running", 12, created="2026-01-01T00:00:00Z")
    submit(state, "head", 8, created="2026-01-01T00:00:01Z")
    submit(state, "small", 4, created="2026-01-01T00:00:02Z")
    K.kueue_pass(state)
    assert gates(state, "small") == list(K.KUEUE_GATES)
    assert gates(state, "head") == list(K.KUEUE_GATES)
    assert cond(workload_of(state, "head"), "QuotaReserved")["message"].endswith("4 more needed")


def test_pending_workloads_are_listed_in_priority_order_with_positions(tmp_path):
    state = make_state(tmp_path, nominal=8)
    submit(state, "running", 8, created="2026-01-01T00:00:00Z")
    K.kueue_pass(state)
    submit(state, "vision-normal", 8, created="2026-01-01T00:00:01Z")
    submit(state, "nlp-normal", 8, ns="team-nlp", created="2026-01-01T00:00:02Z")
    submit(state, "vision-high", 8, pc="gpupoc-high", created="2026-01-01T00:00:03Z")
    K.kueue_pass(state)
    items = K.pending_workloads(state, cluster_queue="training-cq")
    owners = [workload_of(state, n, ns)["metadata"]["name"] for n, ns in
              [("vision-high", "team-vision"), ("vision-normal", "team-vision"), ("nlp-normal", "team-nlp")]]
    assert [i["metadata"]["name"] for i in items] == owners
    assert [i["positionInClusterQueue"] for i in items] == [0, 1, 2]
    assert [i["positionInLocalQueue"] for i in items] == [0, 1, 0]
    assert items[0]["priority"] == 10000 and items[0]["localQueueName"] == "training"
    nlp = K.pending_workloads(state, namespace="team-nlp", local_queue="training")
    assert [(i["metadata"]["namespace"], i["positionInClusterQueue"], i["positionInLocalQueue"]) for i in nlp] == [
        ("team-nlp", 2, 0)]


def test_queue_status_counts_are_kept_current(tmp_path):
    state = make_state(tmp_path, nominal=8)
    submit(state, "a", 6, created="2026-01-01T00:00:00Z")
    submit(state, "b", 6, created="2026-01-01T00:00:01Z")
    K.kueue_pass(state)
    cq = state.store.get("clusterqueues", None, "training-cq")["status"]
    assert (cq["pendingWorkloads"], cq["admittedWorkloads"], cq["reservingWorkloads"]) == (1, 1, 1)
    assert cq["flavorsUsage"][0]["resources"][0]["total"] == "6"
    lq = state.store.get("localqueues", "team-vision", "training")["status"]
    assert (lq["pendingWorkloads"], lq["admittedWorkloads"]) == (1, 1)


def test_admitted_pod_with_another_gate_stays_unscheduled(tmp_path):
    state = make_state(tmp_path)
    submit(state, "wave", 2, gates=["gpupoc.io/wave-release"])
    K.kueue_pass(state)
    assert cond(workload_of(state, "wave"), "Admitted")["status"] == "True"
    assert gates(state, "wave") == ["gpupoc.io/wave-release"]
    schedule_pass(state)
    assert "nodeName" not in state.store.get("pods", "team-vision", "wave")["spec"]


def test_a_pods_workload_is_named_as_real_kueue_names_it():
    # seen on real Kueue v0.17.0 (tests/integration/test_real_kueue.py): pod train-2 of this UID
    assert K.workload_name("train-2", "9869d4f5-ea90-426f-b70a-5bf9102a1bdf") == "pod-train-2-5e1cb"
    long = K.workload_name("x" * 300, "u")
    assert len(long) == 253 and long.startswith("pod-xxx") and long[-6] == "-"


def test_a_queue_over_its_quota_holds_the_second_pod_with_real_kueue_s_words(tmp_path):
    """The scenario of tests/integration/test_real_kueue.py: 5 GPUs of quota, pods of 4 then 2 GPUs; what real
    Kueue v0.17.0 wrote there (docs/real-cluster.md) is what the simulated mode writes."""
    def five_gpus(raw: dict) -> None:
        cq = raw["kueue"]["cluster_queues"][0]
        cq.update(nominal_gpus=5)
        for key in ("cohort", "borrowing_limit_gpus"):
            cq.pop(key, None)
    from .gang_helpers import condition, events, mode_state, run, submit as submit_pod, workload

    state = mode_state(tmp_path, "kueue", edit=five_gpus)
    submit_pod(state, "train-4", "team-vision", 4)
    run(state)
    submit_pod(state, "train-2", "team-vision", 2)
    run(state)
    admitted, held = workload(state, "team-vision", "train-4"), workload(state, "team-vision", "train-2")
    cq = "team-vision-training"
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in admitted["status"]["conditions"]] == [
        ("QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {cq}"),
        ("Admitted", "True", "Admitted", "The workload is admitted")]
    said = {e["reason"]: e["message"] for e in events(state, "Workload", admitted["metadata"]["name"])}
    assert re.fullmatch(rf"Quota reserved in ClusterQueue {cq}, wait time since queued was \d+s", said["QuotaReserved"])
    assert said["Admitted"] == f"Admitted by ClusterQueue {cq}, wait time since reservation was 0s"
    message = ("couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor "
               "training, 1 more needed")
    reserved = condition(held, "QuotaReserved")
    assert (reserved["status"], reserved["reason"], reserved["message"]) == ("False", "Pending", message)
    [pending] = events(state, "Workload", held["metadata"]["name"], "Pending")
    assert (pending["type"], pending["message"], pending["source"]["component"]) == ("Warning", message,
                                                                                     "kueue-admission")
    pod = state.store.get("pods", "team-vision", "train-2")
    assert [g["name"] for g in pod["spec"]["schedulingGates"]] == ["kueue.x-k8s.io/admission",
                                                                   "kueue.x-k8s.io/topology"]
    assert (condition(pod, "PodScheduled")["reason"], condition(pod, "PodScheduled")["message"]) == (
        "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")
    on_pods = {(e["involvedObject"]["name"], e["reason"], e["message"], e["source"]["component"])
               for e in state.store.list("events") if e["involvedObject"]["kind"] == "Pod"}
    assert on_pods >= {
        ("train-2", "CreatedWorkload", f"Created Workload: team-vision/{held['metadata']['name']}",
         "pod-kueue-controller"),
        ("train-4", "CreatedWorkload", f"Created Workload: team-vision/{admitted['metadata']['name']}",
         "pod-kueue-controller"),
        ("train-4", "Started", f"Admitted by clusterQueue {cq}", "pod-kueue-controller")}
    assert not any(name == "train-2" and reason == "Started" for name, reason, _, _ in on_pods)


def test_admission_adds_the_flavors_tolerations_to_the_pod_as_real_kueue(tmp_path):
    """Real Kueue v0.17.0 (tests/integration/test_fidelity_kueue.py) gives an admitted pod its ResourceFlavor's
    tolerations beside its node labels, once."""
    state = make_state(tmp_path)
    flavor = state.store.get("resourceflavors", None, "training")
    mark = {"key": "gpupoc.io/fidelity-flavor", "operator": "Exists", "effect": "NoSchedule"}
    flavor["spec"]["tolerations"] = [mark]
    state.store.update("resourceflavors", flavor)
    submit(state, "job-0", 8)
    K.kueue_pass(state)
    tolerations = state.store.get("pods", "team-vision", "job-0")["spec"]["tolerations"]
    assert tolerations.count(mark) == 1
