"""Four queueing behaviours a POC checks, each as a small scenario run on a fresh cluster of one scheduler mode
(kueue, volcano, kai) with some fault profiles; each returns whether the correct behaviour was seen.

- ``gang_atomic``: a gang of which only part fits is bound (or, in Kueue, admitted) whole or not at all.
- ``lender_reclaims``: team-vision borrows team-nlp's idle GPUs; team-nlp then submits within its own quota,
  and the scheduler evicts a borrower for it.
- ``share_by_weight``: both training teams ask for far more than the pool, team-vision (weight 2) first;
  the GPUs beyond the quotas are divided by weight, so team-nlp still gets its weighted share.
- ``reasons_readable``: a workload that cannot run is explained with the resource (GPUs) it lacks.
"""

from __future__ import annotations

from .gang_helpers import NLP, VISION, bound, condition, evicted, mode_state, podgroup, run, submit, ungated


def gang_atomic(tmp_path, mode: str, faults=()) -> bool:
    state = mode_state(tmp_path, mode, faults)
    if mode == "kueue":
        for i in range(2):  # team-nlp holds its nominal 8: team-vision may admit 16 (its 8 and the shared 8)
            submit(state, f"n{i}", NLP, 4)
        run(state)
        for i in range(5):
            submit(state, f"g{i}", VISION, 4, group="g", total=5)
        run(state)
        admitted = len(ungated(state, VISION, "g"))
        return admitted in (0, 5)
    if mode == "volcano":
        podgroup(state, "g", VISION, 4)
        for i in range(4):  # 3 training nodes: 3 of the 4 pods fit
            submit(state, f"g{i}", VISION, 8, group="g")
    else:
        podgroup(state, "g", VISION, 4, preemptibility="preemptible")
        for i in range(4):  # 6-GPU pods: one per node, 3 of 4 fit
            submit(state, f"g{i}", VISION, 6, group="g")
    run(state)
    return len(bound(state, VISION, "g")) in (0, 4)


def lender_reclaims(tmp_path, mode: str, faults=()) -> bool:
    state = mode_state(tmp_path, mode, faults)
    if mode == "kueue":
        for i in range(6):
            submit(state, f"v{i}", VISION, 4)  # 24: its 8, the shared 8 and team-nlp's 8
        run(state)
        assert len(ungated(state, VISION, "v")) == 6
        submit(state, "n0", NLP, 8)
        run(state)
        return any(condition(w, "Preempted") for w in state.store.list("workloads", VISION))
    if mode == "volcano":
        for i in range(5):
            submit(state, f"v{i}", VISION, 4)  # 20 while team-nlp is idle (its deserved share)
    else:
        for i in range(6):
            submit(state, f"v{i}", VISION, 4, preemptible=True)  # 24: all the training GPUs
    run(state)
    assert len(bound(state, VISION, "v")) >= 5
    submit(state, "n0", NLP, 8, preemptible=True)
    run(state)
    return bool(evicted(state, VISION))


def share_by_weight(tmp_path, mode: str, faults=()) -> bool:
    state = mode_state(tmp_path, mode, faults)
    for ns in (VISION, NLP):
        for i in range(24):
            submit(state, f"{ns[5]}{i:02d}", ns, 1, preemptible=True)
    run(state, passes=2)
    if mode == "kueue":
        vision, nlp = len(ungated(state, VISION)), len(ungated(state, NLP))
    else:
        vision, nlp = len(bound(state, VISION)), len(bound(state, NLP))
    return vision <= 15 and nlp >= 9 and vision > nlp


def reasons_readable(tmp_path, mode: str, faults=()) -> bool:
    state = mode_state(tmp_path, mode, faults)
    if mode in ("kube", "kueue"):
        if mode == "kube":
            pod = submit(state, "big", VISION, 16, queue="none")  # no LocalQueue: kube-scheduler only
            pod["spec"].pop("schedulingGates", None)
            pod["metadata"]["labels"].pop("kueue.x-k8s.io/queue-name", None)
            state.store.update("pods", pod)
            run(state)
            cond = condition(state.store.get("pods", VISION, "big"), "PodScheduled")
            return "nvidia.com/gpu" in (cond or {}).get("message", "")
        submit(state, "big", VISION, 32)
        run(state)
        wl = next(iter(state.store.list("workloads", VISION)))
        return "nvidia.com/gpu" in (condition(wl, "QuotaReserved") or {}).get("message", "")
    submit(state, "big", VISION, 16, preemptible=True)  # larger than any node: a gang of one that never fits
    run(state)
    pod = state.store.get("pods", VISION, "big")
    pod_text = (condition(pod, "PodScheduled") or {}).get("message", "")
    group = next(iter(state.store.list("podgroups", VISION)))
    if mode == "volcano":
        group_text = (condition(group, "Unschedulable") or {}).get("message", "")
        return "Insufficient nvidia.com/gpu" in pod_text and "tasks in gang unschedulable" in group_text
    group_text = " ".join(c.get("message", "") for c in (group.get("status") or {}).get("schedulingConditions") or [])
    return "enough resources: GPUs" in group_text and "enough resources: GPUs" in pod_text


CHECKS = {"gang-partial": gang_atomic, "borrow-not-reclaimed": lender_reclaims, "fairshare-ignored": share_by_weight,
          "reasons-opaque": reasons_readable}
