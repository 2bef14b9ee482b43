"""Kueue's admission cycle over cohorts: borrowing, the three preemption policies, fair sharing, status."""

from __future__ import annotations

import re

from gpupoc.sim.controllers import kueue as K

from .gang_helpers import NLP, VISION, condition, events, evicted, mode_state, run, submit, ungated, workload

PREEMPTED = re.compile(r"^Preempted to accommodate a workload \(UID: [0-9a-f-]{36}, JobUID: [0-9a-f-]{36}\) "
                       r"due to (.+); preemptor path: (\S+); preemptee path: (\S+)$")


def classical(raw: dict) -> None:
    raw["kueue"]["fair_sharing"] = False


def cq_status(state, name: str) -> dict:
    return state.store.get("clusterqueues", None, name)["status"]


def preempted(state, ns: str) -> dict[str, tuple[str, str]]:
    """workload owner pod -> (Preempted reason, human-readable cause)."""
    out = {}
    for w in state.store.list("workloads", ns):
        cond = condition(w, "Preempted")
        if cond and cond["status"] == "True":
            out[w["metadata"]["ownerReferences"][0]["name"]] = (cond["reason"], PREEMPTED.match(cond["message"])[1])
    return out


def test_a_cluster_queue_borrows_from_its_cohort_up_to_its_borrowing_limit(tmp_path):
    state = mode_state(tmp_path, "kueue")
    for i in range(7):
        submit(state, f"v{i}", VISION, 4)
    run(state)
    assert ungated(state, VISION) == [f"v{i}" for i in range(6)], "8 nominal + 16 borrowed"
    usage = cq_status(state, "team-vision-training")["flavorsUsage"][0]["resources"][0]
    assert usage == {"name": "nvidia.com/gpu", "total": "24", "borrowed": "16"}
    message = condition(workload(state, VISION, "v6"), "QuotaReserved")["message"]
    assert message == ("couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "
                       "flavor training, 4 more needed")


def test_a_request_beyond_the_maximum_capacity_says_so(tmp_path):
    state = mode_state(tmp_path, "kueue")
    submit(state, "huge", VISION, 32)
    run(state)
    assert condition(workload(state, VISION, "huge"), "QuotaReserved")["message"] == (
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor training, "
        "previously considered podsets requests (0) + current podset request (32) > maximum capacity (24)")


def test_a_lender_within_its_nominal_quota_reclaims_from_borrowers(tmp_path):
    state = mode_state(tmp_path, "kueue", edit=classical)
    for i in range(6):
        submit(state, f"v{i}", VISION, 4)
    run(state)
    submit(state, "n0", NLP, 8)
    run(state)
    assert preempted(state, VISION) == {"v5": ("InCohortReclamation", "reclamation within the cohort"),
                                        "v4": ("InCohortReclamation", "reclamation within the cohort")}
    message = condition(workload(state, NLP, "n0"), "QuotaReserved")["message"]
    assert message.endswith("8 more needed. Pending the preemption of 2 workload(s)")
    assert evicted(state, VISION) == ["v4", "v5"]
    v5 = state.store.get("pods", VISION, "v5")
    assert condition(v5, "TerminationTarget")["reason"] == "WorkloadEvictedDueToPreempted"
    wl = workload(state, VISION, "v5")
    assert condition(wl, "Evicted")["reason"] == "Preempted" and condition(wl, "Requeued")["status"] == "True"
    assert [e["reason"] for e in events(state, "Workload", wl["metadata"]["name"])][-2:] == [
        "EvictedDueToPreempted", "Preempted"]
    run(state)
    assert ungated(state, NLP) == ["n0"]


def test_within_a_cluster_queue_lower_priority_workloads_make_room(tmp_path):
    state = mode_state(tmp_path, "kueue", edit=classical)
    for i in range(2):
        submit(state, f"low{i}", "team-serving", 4, pc="gpupoc-normal", pool="inference")
    run(state)
    submit(state, "urgent", "team-serving", 4, pc="gpupoc-critical", pool="inference")
    run(state)
    assert preempted(state, "team-serving") == {"low1": ("InClusterQueue", "prioritization in the ClusterQueue")}


def test_reclaim_within_nominal_then_borrowing_preemption_of_lower_priority(tmp_path):
    state = mode_state(tmp_path, "kueue", edit=classical)
    for i in range(4):
        submit(state, f"n{i}", NLP, 4, pc="gpupoc-low")
    for i in range(2):
        submit(state, f"m{i}", NLP, 4, pc="gpupoc-normal")
    run(state)
    assert len(ungated(state, NLP)) == 6, "team-nlp holds all 24, 16 of them borrowed"
    for i in range(4):
        submit(state, f"v{i}", VISION, 4, pc="gpupoc-high")
    run(state)
    assert preempted(state, NLP) == {
        "n3": ("InCohortReclamation", "reclamation within the cohort"),  # v0, v1: within team-vision's nominal
        "n2": ("InCohortReclamation", "reclamation within the cohort"),
        "n1": ("InCohortReclaimWhileBorrowing", "reclamation within the cohort while borrowing"),  # v2, v3
        "n0": ("InCohortReclaimWhileBorrowing", "reclamation within the cohort while borrowing")}


def test_borrowing_preempts_nothing_above_the_max_priority_threshold(tmp_path):
    def threshold_100(raw):
        classical(raw)
        raw["kueue"]["cluster_queues"][0]["preemption"]["max_priority_threshold"] = 100
    state = mode_state(tmp_path, "kueue", edit=threshold_100)
    for i in range(6):
        submit(state, f"m{i}", NLP, 4, pc="gpupoc-normal")  # priority 1000
    run(state)
    for i in range(4):
        submit(state, f"v{i}", VISION, 4, pc="gpupoc-high")
    run(state)
    assert {reason for reason, _ in preempted(state, NLP).values()} == {"InCohortReclamation"}
    assert len(preempted(state, NLP)) == 2, "only team-vision's nominal 8 is taken back"


def test_fair_sharing_divides_the_borrowed_pool_by_weight_with_preemption(tmp_path):
    state = mode_state(tmp_path, "kueue")
    for i in range(24):
        submit(state, f"v{i:02d}", VISION, 1)
    run(state)
    assert len(ungated(state, VISION)) == 24
    for i in range(24):
        submit(state, f"n{i:02d}", NLP, 1)
    run(state, passes=2)
    reasons = {reason for reason, _ in preempted(state, VISION).values()}
    assert reasons == {"InCohortFairSharing"}
    vision = 24 - len(evicted(state, VISION))
    nlp = len(ungated(state, NLP))
    # each keeps its 8; the 8 borrowed go 2:1 as near as whole GPUs allow (5.3 / 2.7)
    assert (vision, nlp) == (14, 10)
    shares = {n: cq_status(state, n)["fairSharing"]["weightedShare"] for n in ("team-vision-training",
                                                                                "team-nlp-training")}
    assert abs(shares["team-vision-training"] - shares["team-nlp-training"]) <= 42  # one GPU of the 24-GPU pool


def test_positions_follow_priority_then_submission_in_the_cluster_queue(tmp_path):
    state = mode_state(tmp_path, "kueue")
    for i in range(8):
        submit(state, f"v{i}", VISION, 4, pc="gpupoc-low")
    run(state)
    submit(state, "v8", VISION, 4, pc="gpupoc-normal")  # preempts the newest low one (withinClusterQueue)
    run(state)
    items = K.pending_workloads(state, namespace=VISION, local_queue="training")
    assert [(i["metadata"]["ownerReferences"][0]["name"], i["positionInClusterQueue"], i["positionInLocalQueue"])
            for i in items] == [("v8", 0, 0), ("v5", 1, 1), ("v6", 2, 2), ("v7", 3, 3)]


def test_a_preemption_names_both_cluster_queues_paths_and_priorities_as_real_kueue(tmp_path):
    """Real Kueue v0.17.0 (tests/integration/test_fidelity_kueue.py): the message ends with the preemptor's and the
    preemptee's ClusterQueue paths from their cohort; the victim's ``Preempted`` event adds both priorities, and
    the preemptor's Workload gets ``PreemptedWorkload``."""
    state = mode_state(tmp_path, "kueue", edit=classical)
    for i in range(6):
        submit(state, f"v{i}", VISION, 4)
    run(state)
    submit(state, "n0", NLP, 8)
    run(state)
    victims = [w for w in state.store.list("workloads", VISION) if (condition(w, "Preempted") or {}).get("status") == "True"]
    assert victims, "team-nlp reclaims its nominal quota"
    match = PREEMPTED.match(condition(victims[0], "Preempted")["message"])
    assert (match[2], match[3]) == ("/training/team-nlp-training", "/training/team-vision-training")
    [note] = [e["message"] for e in events(state, "Workload", victims[0]["metadata"]["name"], "Preempted")]
    assert note.endswith("; preemptor effective priority: 1000 (base: 1000, boost: 0); preemptee effective priority: 1000 "
                         "(base: 1000, boost: 0)"), note
    assert victims[0]["status"]["schedulingStats"]["evictions"] == [
        {"reason": "Preempted", "underlyingCause": "", "count": 1}]
    preemptors = [w for w in state.store.list("workloads", NLP)
                  if events(state, "Workload", w["metadata"]["name"], "PreemptedWorkload")]
    assert preemptors, "the preemptor's PreemptedWorkload event"
