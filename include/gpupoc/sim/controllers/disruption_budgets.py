"""``policy/v1`` PodDisruptionBudgets: the disruption controller's status and the eviction check.

Status, as kube-controller-manager's disruption controller writes it (kubernetes
``pkg/controller/disruption/disruption.go`` ``getExpectedPodCount``, ``countHealthyPods``,
``updatePdbStatus``): ``expectedPods`` (the active pods the selector matches), ``currentHealthy`` (those
Ready), ``desiredHealthy`` (``minAvailable``, a percentage of the expected pods rounded up, or the expected
pods less ``maxUnavailable``), ``disruptionsAllowed`` (healthy beyond desired, never below 0),
``observedGeneration`` and the condition ``DisruptionAllowed`` (reason ``SufficientPods`` or
``InsufficientPods``).

Eviction, as the API server's eviction subresource checks it (``pkg/registry/core/pod/storage/eviction.go``):
a pod covered by more than one budget is refused (500 "This pod has more than one PodDisruptionBudget, which
the eviction subresource does not support."); a Ready pod whose budget allows no disruption is refused with
429 "Cannot evict pod as it would violate the pod's disruption budget." and the cause ``DisruptionBudget``
"The disruption budget <name> needs <desired> healthy pods and has <healthy> currently" (``kubectl drain``
retries it); else the budget's ``disruptionsAllowed`` is decremented and the pod recorded in
``status.disruptedPods``. A pod that is not Ready may go while the budget is met
(``unhealthyPodEvictionPolicy`` IfHealthyBudget, the default).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpupoc.sim import clock
from gpupoc.sim.api.service_defaults import selector_matches
from gpupoc.sim.api.status import StatusError
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers.kubelet_status import set_condition
from gpupoc.sim.pod_state import is_active, is_ready
from gpupoc.sim.store import json_copy

VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
MANY = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


def budgets_for(state: ClusterState, pod: dict) -> list[dict]:
    return [b for b in state.store.list("poddisruptionbudgets", pod["metadata"]["namespace"])
            if selector_matches((b.get("spec") or {}).get("selector"), pod["metadata"].get("labels"))]


def _scaled(value: object, total: int) -> int:
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value or 0)


def budget_status(state: ClusterState, budget: dict) -> dict:
    """The status the disruption controller computes for ``budget`` now."""
    spec = budget.get("spec") or {}
    pods = [p for p in state.store.list("pods", budget["metadata"]["namespace"])
            if is_active(p) and selector_matches(spec.get("selector"), p["metadata"].get("labels"))]
    expected = len(pods)
    healthy = sum(1 for p in pods if is_ready(p))
    if "minAvailable" in spec:
        desired = _scaled(spec["minAvailable"], expected)
    else:
        desired = max(expected - _scaled(spec.get("maxUnavailable", 0), expected), 0)
    allowed = max(healthy - desired, 0)
    status = json_copy(budget.get("status") or {})
    status.update({"expectedPods": expected, "currentHealthy": healthy, "desiredHealthy": desired,
                   "disruptionsAllowed": allowed, "observedGeneration": budget["metadata"].get("generation", 1)})
    disrupted = {k: v for k, v in (status.get("disruptedPods") or {}).items()
                 if state.store.get("pods", budget["metadata"]["namespace"], k) is not None}
    status["disruptedPods"] = disrupted
    if not disrupted:
        status.pop("disruptedPods")
    reason, message = ("SufficientPods", "") if allowed else ("InsufficientPods", "")
    set_condition(status, "DisruptionAllowed", "True" if allowed else "False", reason, message)
    for c in status["conditions"]:
        c.pop("lastProbeTime", None)
        c["observedGeneration"] = status["observedGeneration"]
    return status


@dataclass
class DisruptionController:
    """Keeps every PodDisruptionBudget's status current."""

    state: ClusterState

    def run_pass(self) -> int:
        changed = 0
        for budget in list(self.state.store.list("poddisruptionbudgets")):
            status = budget_status(self.state, budget)
            if status != budget.get("status"):
                budget["status"] = status
                self.state.store.update("poddisruptionbudgets", budget)
                changed += 1
        return changed


def admit_eviction(state: ClusterState, pod: dict, dry_run: bool = False) -> None:
    """Raise the API server's refusal when evicting ``pod`` would break its budget; else take one disruption."""
    budgets = budgets_for(state, pod)
    if not budgets:
        return
    if len(budgets) > 1:
        raise StatusError(500, MANY, "InternalError")
    budget = budgets[0]
    status = budget_status(state, budget)
    name = pod["metadata"]["name"]
    if not is_ready(pod) and status["currentHealthy"] >= status["desiredHealthy"]:
        return
    if status["disruptionsAllowed"] <= 0:
        cause = (f"The disruption budget {budget['metadata']['name']} needs {status['desiredHealthy']} healthy pods "
                 f"and has {status['currentHealthy']} currently")
        err = StatusError(429, VIOLATION, "TooManyRequests", {"causes": [{"reason": "DisruptionBudget",
                                                                          "message": cause}]})
        raise err
    if dry_run:
        return
    status["disruptionsAllowed"] -= 1
    status.setdefault("disruptedPods", {})[name] = clock.rfc3339()
    budget["status"] = status
    state.store.update("poddisruptionbudgets", budget)
