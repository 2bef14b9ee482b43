from gpupoc.sim.events import WARNING, EventRecorder
from gpupoc.sim.store import Store


def _pod(store: Store) -> dict:
    return store.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a"}})


def test_the_schedulers_events_carry_its_action_and_the_kubelets_none():
    store = Store()
    recorder = EventRecorder(store)
    pod = _pod(store)
    failed = recorder.record(pod, "FailedScheduling", "0/1 nodes are available", WARNING, "default-scheduler")
    preempted = recorder.record(pod, "Preempted", "Preempted by pod u on node n", component="default-scheduler")
    pulled = recorder.record(pod, "Pulled", "Container image already present", component="kubelet")
    assert failed["action"] == "Scheduling" and preempted["action"] == "Preempting"
    assert "action" not in pulled
