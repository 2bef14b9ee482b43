"""kueue-requeue: the Workload of a preempted pod is evicted in Kueue's words and requeued; its replacement
pod (new name, same labels) takes the Workload over and waits for re-admission."""

from __future__ import annotations

import re

from gpupoc.sim.controllers import kueue as K

from .behaviour_helpers import NS, bound, condition, events, make_state, pod, submit

MESSAGE = re.compile(r"Preempted to accommodate a workload \(UID: [0-9a-f-]{36}, JobUID: [0-9a-f-]{36}\) due to "
                     r"prioritization in the ClusterQueue; preemptor path: /training-cq; preemptee path: /training-cq")
LOWS = ["low-a", "low-b", "low-c"]


def workload(state, uid_of_pod: str) -> dict:
    return next(w for w in state.store.list("workloads", NS)
                if w["metadata"]["ownerReferences"][0]["uid"] == uid_of_pod)


def kueue_preemption(state) -> tuple[str, dict]:
    """Three admitted low-priority Kueue pods fill the pool; a high-priority one preempts one of them."""
    for name in LOWS:
        submit(state, name, gpus=8, pc="gpupoc-low", gated=False, queue="training")
    state.kueue.run_pass()
    state.scheduler.run_pass()
    assert bound(state, LOWS) == LOWS
    submit(state, "high-d", gpus=8, pc="gpupoc-high", gated=False, queue="training")
    state.kueue.run_pass()
    state.scheduler.run_pass()
    [victim] = [n for n in LOWS if pod(state, n)["metadata"].get("deletionTimestamp")]
    return victim, pod(state, victim)


def test_the_preempted_pods_workload_is_evicted_requeued_and_handed_to_a_replacement(tmp_path):
    state = make_state(tmp_path, behaviours=["kueue-requeue"], training_cq_gpus=32)
    victim, old = kueue_preemption(state)
    [new] = [p for p in state.store.list("pods", NS) if p["metadata"]["name"] not in (*LOWS, "high-d")]
    wl = workload(state, new["metadata"]["uid"])
    evicted = condition(wl, "Evicted")
    assert (evicted["status"], evicted["reason"]) == ("True", "Preempted")
    assert MESSAGE.fullmatch(evicted["message"]), evicted["message"]
    assert (condition(wl, "Preempted")["reason"], condition(wl, "Requeued")["status"]) == ("InClusterQueue", "True")
    assert condition(wl, "QuotaReserved")["status"] == "False" and "admission" not in wl["status"]
    assert wl["status"]["schedulingStats"]["evictions"] == [
        {"reason": "Preempted", "underlyingCause": "", "count": 1}]
    assert {e["reason"] for e in events(state, wl["metadata"]["name"])} >= {"EvictedDueToPreempted", "Preempted"}
    assert new["metadata"]["name"] != victim
    assert old["metadata"]["labels"].items() <= new["metadata"]["labels"].items()
    assert [g["name"] for g in new["spec"]["schedulingGates"]] == list(K.KUEUE_GATES), "waits for re-admission"
    assert len(state.store.list("workloads", NS)) == 4, "the replacement took the Workload over, no new one"


def test_a_requeued_workload_is_admitted_again_and_keeps_its_eviction_as_history(tmp_path):
    state = make_state(tmp_path, behaviours=["kueue-requeue"], training_cq_gpus=32)
    kueue_preemption(state)
    [new] = [p for p in state.store.list("pods", NS) if p["metadata"]["name"] not in (*LOWS, "high-d")]
    state.kueue.run_pass()
    wl = workload(state, new["metadata"]["uid"])
    assert condition(wl, "QuotaReserved")["status"] == "True"
    evicted = condition(wl, "Evicted")
    assert (evicted["status"], evicted["reason"]) == ("False", "QuotaReserved")
    assert evicted["message"].startswith("Previously: Preempted to accommodate a workload")
    assert not pod(state, new["metadata"]["name"])["spec"].get("schedulingGates")
