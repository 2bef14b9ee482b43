"""The serving-preempted fault: kube-scheduler preempts a serving replica (a pod its ReplicaSet controls) for a
lower-priority pod, which a correct scheduler never does."""

from __future__ import annotations

import pytest

from gpupoc.sim.admission import admit_pod, after_pod_created
from gpupoc.sim.controllers.scheduler import scheduler_for

from .service_helpers import NS, TOLERATE_GPU, Controllers, create, deployment_body, make_state

INFERENCE = {"gpupoc.io/pool": "inference"}


def burst(state, name: str, gpus: int = 4) -> dict:
    """A deadline-training pod of another tenant spilling onto the inference pool."""
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"priorityClassName": "gpupoc-high", "tolerations": TOLERATE_GPU, "nodeSelector": INFERENCE,
                     "containers": [{"name": "base", "image": "gpupoc/virtual:1",
                                     "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}
    pod = admit_pod(state, body, "team-vision")
    state.store.create("pods", pod)
    after_pod_created(state, pod)
    return pod


@pytest.mark.parametrize(("faults", "preempted"), [((), False), (("serving-preempted",), True)])
def test_a_training_burst_preempts_serving_only_under_the_fault(tmp_path, faults, preempted):
    state = make_state(tmp_path, faults=faults)
    body = deployment_body(replicas=2)
    template = body["spec"]["template"]["spec"]
    template.update({"priorityClassName": "gpupoc-critical", "nodeSelector": INFERENCE})
    template["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "4"}}
    create(state, "deployments", body)
    Controllers(state).turn()
    scheduler = scheduler_for(state)
    scheduler.run_pass()
    serving = state.store.list("pods", NS)
    assert len(serving) == 2 and all(p["spec"].get("nodeName") for p in serving), "the replicas fill the pool"
    burst(state, "burst")
    scheduler.run_pass()
    taken = [p["metadata"]["name"] for p in state.store.list("pods", NS) if p["metadata"].get("deletionTimestamp")]
    assert bool(taken) is preempted, taken
