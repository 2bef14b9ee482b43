"""The Deployment and ReplicaSet controllers: a ReplicaSet per template, pods owned by it, a rolling update
within maxSurge and maxUnavailable, Recreate, the conditions with the controller's reasons, and garbage
collection of what lost its owner."""

from __future__ import annotations

import pytest

from gpupoc.sim.api.status import StatusError
from gpupoc.sim.controllers.deployments import HASH_LABEL, resolve, template_hash

from .service_helpers import NS, Controllers, create, deployment_body, finish_deleted, live_pods, make_ready, make_state


def sets(state) -> list[dict]:
    return state.store.list("replicasets", NS)


def conditions(state, name: str = "web") -> dict:
    dep = state.store.get("deployments", NS, name)
    return {c["type"]: c for c in dep["status"].get("conditions") or []}


def test_a_deployment_makes_one_replicaset_whose_pods_it_owns(tmp_path):
    state = make_state(tmp_path)
    dep = create(state, "deployments", deployment_body(replicas=2))
    ctl = Controllers(state)
    ctl.turn()
    [rs] = sets(state)
    digest = template_hash(dep["spec"]["template"])
    assert rs["metadata"]["name"] == f"web-{digest}" and rs["metadata"]["labels"][HASH_LABEL] == digest
    assert rs["spec"]["replicas"] == 2 and rs["metadata"]["ownerReferences"][0]["uid"] == dep["metadata"]["uid"]
    pods = live_pods(state, rs)
    assert len(pods) == 2 and all(p["metadata"]["name"].startswith(f"web-{digest}-") for p in pods)
    assert all(p["metadata"]["labels"] == {"app": "web", HASH_LABEL: digest} for p in pods)
    assert conditions(state)["Available"]["reason"] == "MinimumReplicasUnavailable"
    assert conditions(state)["Progressing"]["reason"] == "NewReplicaSetCreated"
    make_ready(state, pods)
    ctl.turn()
    status = state.store.get("deployments", NS, "web")["status"]
    assert (status["readyReplicas"], status["availableReplicas"], status["updatedReplicas"]) == (2, 2, 2)
    assert conditions(state)["Available"]["reason"] == "MinimumReplicasAvailable"
    assert conditions(state)["Progressing"]["message"] == f'ReplicaSet "web-{digest}" has successfully progressed.'
    reasons = [e["reason"] for e in state.store.list("events", NS)]
    assert "ScalingReplicaSet" in reasons and reasons.count("SuccessfulCreate") == 2


def test_a_rolling_update_stays_within_max_surge_and_max_unavailable(tmp_path):
    state = make_state(tmp_path)
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    dep = create(state, "deployments", deployment_body(replicas=4, strategy=strategy))
    ctl = Controllers(state)
    ctl.turn()
    [old] = sets(state)
    make_ready(state, live_pods(state, old))
    ctl.turn()
    dep["spec"]["template"]["spec"]["containers"][0]["image"] = "gpupoc/workload:2.0"
    state.store.update("deployments", dep)
    for _ in range(30):
        ctl.turn()
        pods = [p for p in state.store.list("pods", NS) if not p["metadata"].get("deletionTimestamp")]
        ready = [p for p in pods if p["status"].get("conditions")]
        assert len(pods) <= 5, "more pods than replicas + maxSurge"
        assert len(ready) >= 4, "fewer ready pods than replicas - maxUnavailable"
        make_ready(state, [p for p in pods if not p["status"].get("conditions")])
        finish_deleted(state)
        if conditions(state)["Progressing"]["reason"] == "NewReplicaSetAvailable":
            break
    new = next(rs for rs in sets(state) if rs["metadata"]["uid"] != old["metadata"]["uid"])
    assert state.store.get("replicasets", NS, old["metadata"]["name"])["spec"]["replicas"] == 0
    assert new["spec"]["replicas"] == 4 and new["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert conditions(state)["Progressing"]["reason"] == "NewReplicaSetAvailable"


def test_recreate_scales_the_old_replicaset_down_before_the_new_one_up(tmp_path):
    state = make_state(tmp_path)
    dep = create(state, "deployments", deployment_body(replicas=2, strategy={"type": "Recreate"}))
    ctl = Controllers(state)
    ctl.turn()
    [old] = sets(state)
    make_ready(state, live_pods(state, old))
    dep["spec"]["template"]["metadata"]["labels"]["version"] = "2"
    state.store.update("deployments", dep)
    ctl.turn()
    new = next(rs for rs in sets(state) if rs["metadata"]["uid"] != old["metadata"]["uid"])
    assert new["spec"]["replicas"] == 0, "the new ReplicaSet grew while old pods still terminate"
    finish_deleted(state)
    ctl.turn(2)
    assert state.store.get("replicasets", NS, new["metadata"]["name"])["spec"]["replicas"] == 2


def test_progress_deadline_exceeded_when_no_pod_becomes_ready(tmp_path):
    state = make_state(tmp_path)
    body = deployment_body(replicas=1)
    body["spec"]["progressDeadlineSeconds"] = 0
    create(state, "deployments", body)
    ctl = Controllers(state)
    ctl.turn(3)
    progressing = conditions(state)["Progressing"]
    assert (progressing["status"], progressing["reason"]) == ("False", "ProgressDeadlineExceeded")
    assert progressing["message"].endswith("has timed out progressing.")


def test_a_deleted_pod_is_replaced_and_scaling_down_deletes_unscheduled_then_unready_pods_first(tmp_path):
    state = make_state(tmp_path)
    dep = create(state, "deployments", deployment_body(replicas=3))
    ctl = Controllers(state)
    ctl.turn()
    [rs] = sets(state)
    first, ready, unready = live_pods(state, rs)
    make_ready(state, [first, ready])
    make_ready(state, [unready], ready=False)
    state.store.delete("pods", NS, first["metadata"]["name"])
    ctl.turn()
    names = {p["metadata"]["name"] for p in live_pods(state, rs)}
    [replacement] = names - {ready["metadata"]["name"], unready["metadata"]["name"]}
    assert len(names) == 3 and first["metadata"]["name"] not in names
    for replicas, kept in ((2, {ready["metadata"]["name"], unready["metadata"]["name"]}),
                           (1, {ready["metadata"]["name"]})):
        dep["spec"]["replicas"] = replicas
        state.store.update("deployments", dep)
        ctl.turn()
        assert {p["metadata"]["name"] for p in live_pods(state, rs)} == kept
    assert replacement not in {p["metadata"]["name"] for p in state.store.list("pods", NS)}


def test_deleting_a_deployment_collects_its_replicasets_and_pods(tmp_path):
    state = make_state(tmp_path)
    create(state, "deployments", deployment_body(replicas=2))
    ctl = Controllers(state)
    ctl.turn()
    state.store.delete("deployments", NS, "web")
    ctl.turn(2)
    assert not sets(state) and not [p for p in state.store.list("pods", NS) if p["metadata"].get("ownerReferences")]
    state.audit.close()
    collected = [e for e in state.audit.path.read_text().splitlines() if "generic-garbage-collector" in e]
    assert collected, "the garbage collector's deletes are not in the audit log"


def test_the_api_server_refuses_a_selector_that_does_not_match_the_template(tmp_path):
    state = make_state(tmp_path)
    body = deployment_body()
    body["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    with pytest.raises(StatusError, match="selector` does not match template `labels`"):
        create(state, "deployments", body)


@pytest.mark.parametrize(("value", "total", "up", "expected"), [("25%", 4, True, 1), ("25%", 3, True, 1),
                                                                 ("25%", 3, False, 0), (2, 10, False, 2)])
def test_int_or_percent_rounds_surge_up_and_unavailable_down(value, total, up, expected):
    assert resolve(value, total, up) == expected
