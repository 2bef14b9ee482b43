"""The ``pod-lost`` fault: one running bare GPU pod vanishes from the store, with no delete request, audit
record or event; nothing is lost without the fault, and never a pod a controller owns."""

from __future__ import annotations

from datetime import timedelta

from gpupoc.sim import clock
from gpupoc.sim.fault_profiles.pod_lost import PodLoss, is_target
from gpupoc.sim.faults import Fault

from .kubelet_helpers import NS, VIRTUAL, make_state, pod_obj

NOW = clock.now()


def running(name: str, gpus: int = 1, for_s: float = 5.0, owner: bool = False) -> dict:
    pod = pod_obj(name, VIRTUAL, gpus=gpus)
    started = clock.rfc3339(NOW - timedelta(seconds=for_s))
    pod["status"].update(phase="Running", containerStatuses=[
        {"name": "base", "state": {"running": {"startedAt": started}}}])
    if owner:
        pod["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "svc", "controller": True}]
    return pod


def test_only_a_bare_gpu_pod_that_has_run_a_moment_is_a_target():
    assert is_target(running("a"), NOW)
    assert not is_target(running("b", gpus=0), NOW), "no GPU"
    assert not is_target(running("c", owner=True), NOW), "a ReplicaSet's replica is replaced, not lost"
    assert not is_target(running("d", for_s=0.0), NOW), "just started"
    pending = running("e")
    pending["status"]["phase"] = "Pending"
    assert not is_target(pending, NOW)


def test_the_fault_loses_the_first_running_pod_by_name_once_and_leaves_no_record(tmp_path):
    state = make_state(tmp_path, faults=(Fault.POD_LOST,))
    for name in ("wave-b", "wave-a", "svc-r"):
        state.store.create("pods", running(name, owner=name == "svc-r"))
    loss = PodLoss(state)
    loss.run_pass()
    assert loss.lost == (NS, "wave-a")
    assert state.store.get("pods", NS, "wave-a") is None
    loss.run_pass()
    assert state.store.get("pods", NS, "wave-b") is not None, "one pod only"
    assert not [e for e in state.store.list("events", NS) if (e.get("involvedObject") or {}).get("name") == "wave-a"]
    audit = state.audit_log_path.read_text() if state.audit_log_path.is_file() else ""
    assert "wave-a" not in audit, "no delete request, no audit record"


def test_without_the_fault_no_controller_loses_pods(tmp_path):
    assert "pod-loss" not in make_state(tmp_path / "ok").addons
    faulty = make_state(tmp_path / "f", faults=(Fault.POD_LOST,))
    assert isinstance(faulty.addons["pod-loss"], PodLoss)
    assert list(faulty.addons)[-1] == "pod-loss", "run after every registered controller"
