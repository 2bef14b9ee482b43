"""Each planted defect of the simulated cluster is observable through the API, next to a correct cluster.

The other profiles have their own end-to-end tests: cross-tenant-logs and audit-gaps in test_sim_api.py and
test_probes.py, gpus-leak in test_probes.py.
"""

from __future__ import annotations

import time

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.waiting import first_truthy

pytestmark = pytest.mark.integration

TRAINING = {"gpupoc.io/pool": "training"}
GPU_TOLERATION = [client.V1Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")]


def _pod(name: str, namespace: str, image: str, gpus: int, *, priority_class: str | None = None,
         env: dict[str, str] | None = None, args: list[str] | None = None) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, namespace=namespace),
        spec=client.V1PodSpec(
            restart_policy="Never",
            priority_class_name=priority_class,
            node_selector=TRAINING,
            tolerations=GPU_TOLERATION,
            containers=[client.V1Container(
                name="base", image=image, args=args,
                env=[client.V1EnvVar(name=k, value=v) for k, v in (env or {}).items()],
                resources=client.V1ResourceRequirements(limits={"nvidia.com/gpu": str(gpus), "memory": "1Gi"}),
            )],
        ),
    )


def _wait(predicate, timeout: float = 120.0, what: str = "condition"):  # a stall guard; ends when it holds
    return first_truthy(what, predicate, step_seconds=timeout, poll=0.2)


def _core(sim, context: str = "admin") -> client.CoreV1Api:
    return client.CoreV1Api(sim.client(context, http=True))


@pytest.mark.parametrize("faults, admitted", [("", 1), ("quota-not-enforced", 2)])
def test_quota_not_enforced_admits_pods_beyond_the_tenant_quota(start_sim, faults, admitted):
    sim = start_sim(faults=faults)
    core = _core(sim, "team-serving")
    hard = int(core.read_namespaced_resource_quota("team-serving-gpu", "team-serving").spec.hard[
        "requests.nvidia.com/gpu"])
    outcomes = []
    for i in range(2):  # two pods of more than half the quota: the second exceeds it
        try:
            core.create_namespaced_pod("team-serving", _pod(f"big-{i}", "team-serving", "gpupoc/virtual:1.0",
                                                            hard // 2 + 1))
            outcomes.append(201)
        except ApiException as exc:
            outcomes.append(exc.status)
            assert "exceeded quota: team-serving-gpu" in exc.body
    assert outcomes.count(201) == admitted, outcomes


@pytest.mark.parametrize("faults", ["", "events-dropped"])
def test_events_dropped_hides_the_image_pull_failure_from_events(start_sim, faults):
    sim = start_sim(faults=faults)
    core = _core(sim)
    core.create_namespaced_pod("team-nlp", _pod("no-image", "team-nlp", "registry.invalid/x/none:1", 1))
    _wait(lambda: (core.read_namespaced_pod("no-image", "team-nlp").status.container_statuses or [None])[0]
          and core.read_namespaced_pod("no-image", "team-nlp").status.container_statuses[0].state.waiting,
          what="the container to wait on its image")
    def warnings() -> list:
        events = core.list_namespaced_event("team-nlp", field_selector="involvedObject.name=no-image").items
        return [e for e in events if e.type == "Warning"]

    if faults:
        time.sleep(1.0)  # a dropped event stays dropped: waiting longer only makes this check stronger
        assert warnings() == [], [(e.reason, e.message) for e in warnings()]
    else:  # the kubelet posts it with the status: waited for, since a loaded machine may take longer
        _wait(lambda: any(e.reason == "Failed" and "ErrImagePull" in e.message for e in warnings()),
              what="the Failed ErrImagePull warning of no-image")


@pytest.mark.parametrize("faults", ["", "logs-lost-on-failure"])
def test_logs_lost_on_failure_empties_the_log_of_a_failed_container(start_sim, faults):
    sim = start_sim(faults=faults)
    core = _core(sim)
    core.create_namespaced_pod("team-vision", _pod(
        "crash", "team-vision", "gpupoc/workload:1.0", 1, args=["--mode", "fail", "--duration", "1"]))
    _wait(lambda: core.read_namespaced_pod("crash", "team-vision").status.phase == "Failed", what="pod Failed")
    resp = core.read_namespaced_pod_log("crash", "team-vision", _preload_content=False)
    text = resp.data.decode()
    if faults:
        assert text.strip() == ""
    else:
        assert "planted failure" in text


@pytest.mark.parametrize("faults, winner", [("", "urgent"), ("priority-ignored", "early")])
def test_priority_ignored_gives_a_freed_node_to_the_oldest_pod(start_sim, faults, winner):
    sim = start_sim(faults=faults)
    core = _core(sim)
    long_run = {"WORKLOAD_DURATION_SECONDS": "600"}
    # fill the three training nodes with pods nobody may preempt
    for i in range(3):
        core.create_namespaced_pod("default", _pod(f"filler-{i}", "default", "gpupoc/virtual:1.0", 8,
                                                   priority_class="gpupoc-critical", env=long_run))
    _wait(lambda: all(core.read_namespaced_pod(f"filler-{i}", "default").spec.node_name for i in range(3)),
          what="fillers bound")
    core.create_namespaced_pod("team-vision", _pod("early", "team-vision", "gpupoc/virtual:1.0", 8,
                                                   priority_class="gpupoc-low", env=long_run))
    time.sleep(1.1)  # creation timestamps have second precision
    core.create_namespaced_pod("team-nlp", _pod("urgent", "team-nlp", "gpupoc/virtual:1.0", 8,
                                                priority_class="gpupoc-high", env=long_run))
    time.sleep(1.0)
    assert core.read_namespaced_pod("early", "team-vision").spec.node_name is None
    assert core.read_namespaced_pod("urgent", "team-nlp").spec.node_name is None

    core.delete_namespaced_pod("filler-0", "default", grace_period_seconds=0)
    bound = _wait(lambda: [n for n, ns in (("early", "team-vision"), ("urgent", "team-nlp"))
                           if core.read_namespaced_pod(n, ns).spec.node_name], what="one waiting pod bound")
    assert bound == [winner]
