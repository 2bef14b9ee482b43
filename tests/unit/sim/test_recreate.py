"""The Job controller of the recreating profiles: a taken-away pod is replaced under a new name with the same
labels and annotations, owned by a Job, created (and audited) as the job-controller service account."""

from __future__ import annotations

from gpupoc.sim.controllers import nodes
from gpupoc.sim.controllers.recreate import BACKOFF_LIMIT, CONTROLLER_UID_LABEL, JOB_NAME_LABEL

from .behaviour_helpers import NS, audited, events, make_state, pod, preemption, submit


def others(state, *known: str) -> list[dict]:
    return [p for p in state.store.list("pods", NS) if p["metadata"]["name"] not in known]


def test_a_preempted_pod_is_replaced_at_once_under_a_new_name_with_the_same_labels(tmp_path):
    state = make_state(tmp_path, behaviours=["controller-recreates"])
    victim, preemptor = preemption(state)
    old = pod(state, victim)
    [new] = others(state, "low-a", "low-b", "low-c", preemptor)
    meta = new["metadata"]
    assert meta["name"] != victim and meta["name"].startswith(f"{victim}-") and meta["generateName"] == f"{victim}-"
    assert old["metadata"]["labels"].items() <= meta["labels"].items(), "a label of the old pod is missing"
    assert meta["labels"][JOB_NAME_LABEL] == meta["labels"]["job-name"] == victim
    assert meta["annotations"] == old["metadata"]["annotations"]
    [owner] = meta["ownerReferences"]
    assert (owner["kind"], owner["apiVersion"], owner["name"], owner["controller"]) == ("Job", "batch/v1", victim,
                                                                                      True)
    assert owner["uid"] == meta["labels"][CONTROLLER_UID_LABEL]
    assert meta["uid"] != old["metadata"]["uid"] and not new["spec"].get("nodeName")
    assert old["metadata"].get("deletionTimestamp"), "the old pod still terminates while its replacement waits"
    [create] = audited(state, "create", meta["name"])
    assert create["user"]["username"] == "system:serviceaccount:kube-system:job-controller"
    assert create["responseStatus"]["code"] == 201 and create["requestObject"]["metadata"]["generateName"]
    [made] = events(state, victim, "SuccessfulCreate")
    assert made["involvedObject"]["kind"] == "Job" and made["message"] == f"Created pod: {meta['name']}"
    assert made["source"]["component"] == "job-controller"


def test_every_replacement_of_a_line_keeps_the_job_and_the_job_gives_up_after_its_backoff_limit(tmp_path):
    state = make_state(tmp_path, behaviours=["controller-recreates"])
    current = submit(state, "w", gpus=1, gated=False)
    names, uids = ["w"], set()
    for _ in range(BACKOFF_LIMIT + 1):
        state.scheduler.run_pass()
        current = pod(state, current["metadata"]["name"])
        nodes.evict_pod(state, current, current["spec"]["nodeName"])
        fresh = others(state, *names)
        if not fresh:
            break
        [current] = fresh
        names.append(current["metadata"]["name"])
        uids.add(current["metadata"]["labels"][CONTROLLER_UID_LABEL])
        assert current["metadata"]["labels"][JOB_NAME_LABEL] == "w"
    assert len(names) == BACKOFF_LIMIT + 1 and len(uids) == 1
    assert len(set(names)) == len(names)
    assert [e["reason"] for e in events(state, "w") if e["involvedObject"]["kind"] == "Job"][-1] == \
        "BackoffLimitExceeded"


def test_a_replacement_refused_by_quota_is_created_once_the_old_pod_is_gone(tmp_path):
    state = make_state(tmp_path, behaviours=["controller-recreates"], quota_gpus=32)
    victim, preemptor = preemption(state)
    assert others(state, "low-a", "low-b", "low-c", preemptor) == [], "the terminating pod still holds quota"
    assert len(state.recreator.waiting) == 1
    state.store.delete("pods", NS, victim)
    state.recreator.waiting[0].next_try = 0.0
    assert state.recreator.run_pass() == 1
    [new] = others(state, "low-a", "low-b", "low-c", preemptor)
    assert new["metadata"]["labels"][JOB_NAME_LABEL] == victim


def test_without_a_recreating_profile_a_preempted_pod_is_not_replaced(tmp_path):
    state = make_state(tmp_path)
    _, preemptor = preemption(state)
    assert others(state, "low-a", "low-b", "low-c", preemptor) == []
    assert not state.recreator.enabled
