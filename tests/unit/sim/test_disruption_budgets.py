"""PodDisruptionBudgets: the disruption controller's arithmetic and the eviction check that honours it."""

from __future__ import annotations

import pytest

from gpupoc.sim.api.status import StatusError
from gpupoc.sim.controllers.disruption_budgets import MANY, VIOLATION, admit_eviction, budget_status

from .service_helpers import NS, Controllers, create, deployment_body, make_ready, make_state


def setup(tmp_path, replicas: int = 3, **budget_spec):
    state = make_state(tmp_path)
    create(state, "deployments", deployment_body(replicas=replicas))
    Controllers(state).turn()
    pods = state.store.list("pods", NS)
    make_ready(state, pods)
    budget = create(state, "poddisruptionbudgets", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": NS},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **budget_spec}})
    return state, pods, budget


@pytest.mark.parametrize(("spec", "desired", "allowed"), [({"minAvailable": 2}, 2, 1), ({"minAvailable": "50%"}, 2, 1),
                                                          ({"maxUnavailable": 1}, 2, 1), ({"minAvailable": 3}, 3, 0)])
def test_the_budget_allows_what_is_healthy_beyond_desired(tmp_path, spec, desired, allowed):
    state, _, budget = setup(tmp_path, **spec)
    status = budget_status(state, budget)
    assert (status["expectedPods"], status["currentHealthy"]) == (3, 3)
    assert (status["desiredHealthy"], status["disruptionsAllowed"]) == (desired, allowed)
    [cond] = status["conditions"]
    assert (cond["type"], cond["reason"]) == ("DisruptionAllowed", "SufficientPods" if allowed else "InsufficientPods")


def test_an_eviction_takes_one_disruption_and_the_next_is_refused_with_the_budget_named(tmp_path):
    state, pods, budget = setup(tmp_path, minAvailable=2)
    admit_eviction(state, pods[0])
    assert pods[0]["metadata"]["name"] in budget["status"]["disruptedPods"]
    pods[0]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    state.store.update("pods", pods[0])
    with pytest.raises(StatusError) as refused:
        admit_eviction(state, pods[1])
    assert refused.value.code == 429 and refused.value.status["message"] == VIOLATION
    [cause] = refused.value.status["details"]["causes"]
    assert cause == {"reason": "DisruptionBudget",
                     "message": "The disruption budget web needs 2 healthy pods and has 2 currently"}


def test_an_unready_pod_may_go_while_the_budget_holds_and_two_budgets_refuse(tmp_path):
    state, pods, _ = setup(tmp_path, replicas=3, minAvailable=2)
    make_ready(state, pods[2:], ready=False)
    admit_eviction(state, pods[2])  # 2 healthy, 2 desired: the unready pod is no loss
    create(state, "poddisruptionbudgets", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "other", "namespace": NS},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 1}})
    with pytest.raises(StatusError, match="more than one PodDisruptionBudget") as refused:
        admit_eviction(state, pods[0])
    assert refused.value.status["message"] == MANY
