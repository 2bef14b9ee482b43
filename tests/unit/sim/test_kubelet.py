"""The simulated kubelet: process and virtual containers, image pulls, OOM, restarts, deletion, faults."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import psutil
import pytest

from gpupoc.sim import clock
from gpupoc.sim.controllers import kubelet_status as ks
from gpupoc.sim.faults import Fault

try:
    from .kubelet_helpers import (NODE, NS, VIRTUAL, WORKLOAD, as_v1pod, bind, cstate, drive, events, get, log_lines,
                                  make_state, phase, pod_obj, with_kubelet)
except ImportError:
    from kubelet_helpers import (NODE, NS, VIRTUAL, WORKLOAD, as_v1pod, bind, cstate, drive, events, get, log_lines,
                                 make_state, phase, pod_obj, with_kubelet)

pytestmark = pytest.mark.timeout(300)  # a hang guard: drive() fails first, naming what it awaited

REQUIRED_CONTAINER_FIELDS = {"name", "image", "imageID", "ready", "restartCount", "started", "state"}


def terminated(state, name) -> dict:
    return cstate(state, name)["state"]["terminated"]


def test_process_pod_runs_to_succeeded_with_logs_status_and_artifact(tmp_path):
    state = make_state(tmp_path)
    bind(state, pod_obj("train-ok", WORKLOAD, {"WORKLOAD_DURATION_SECONDS": "0.3"}, gpus=2), gpus=2)
    uuids = [g.uuid for g in state.inventory.held_by((NS, "train-ok"))]
    seen_running = []

    async def body(kl):
        def done():
            if phase(state, "train-ok") == "Running":
                seen_running.append(cstate(state, "train-ok"))
            return phase(state, "train-ok") in ("Succeeded", "Failed")
        await drive(kl, done, what="train-ok to finish")

    asyncio.run(with_kubelet(state, body))
    pod = get(state, "train-ok")
    st = pod["status"]
    assert st["phase"] == "Succeeded", st
    assert seen_running and "running" in seen_running[0]["state"] and seen_running[0]["ready"] is True
    cs = st["containerStatuses"][0]
    assert REQUIRED_CONTAINER_FIELDS <= set(cs), cs
    t = cs["state"]["terminated"]
    assert (t["exitCode"], t["reason"]) == (0, "Completed")
    assert t["containerID"].startswith("containerd://")
    assert abs((clock.parse(t["finishedAt"]) - clock.now()).total_seconds()) < 30, "finishedAt must be wall-clock"
    assert cs["imageID"].startswith("docker.io/gpupoc/workload@sha256:")
    assert {c["type"] for c in st["conditions"]} >= {"Initialized", "Ready", "ContainersReady", "PodScheduled"}
    ready = next(c for c in st["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "PodCompleted")
    assert st["hostIP"].startswith("192.0.2.") and st["podIP"].startswith("10.244.")
    assert st["startTime"] and st["qosClass"] == "BestEffort"
    reasons = [r for _, r, _ in events(state, "train-ok")]
    assert reasons[:4] == ["Pulling", "Pulled", "Created", "Started"], reasons
    lines = log_lines(state, "train-ok")
    assert f"NVIDIA_VISIBLE_DEVICES={','.join(uuids)}" in lines
    assert any(line.startswith("epoch=1 ") and "accuracy=" in line for line in lines), lines
    art = next(line for line in lines if line.startswith("artifact: "))
    assert state.logs.get(NS, "train-ok", "base").closed, "the log must close when the container ends"
    assert state.inventory.held_by((NS, "train-ok")) == [], "GPUs are released when the pod ends"
    manifest = json.loads((state.artifact_dir(NS) / "train-ok" / "manifest.json").read_text())
    assert manifest["producer_pod"] == "train-ok" and manifest["namespace"] == NS
    assert manifest["sha256"] in art and manifest["gpus"] == uuids
    v1 = as_v1pod(pod)
    assert v1.status.container_statuses[0].state.terminated.exit_code == 0


def test_process_pod_failure_reports_exit_code_and_fallback_message(tmp_path):
    state = make_state(tmp_path)
    bind(state, pod_obj("train-fail", WORKLOAD, {"WORKLOAD_MODE": "fail", "WORKLOAD_EXIT_CODE": "3",
                                                 "WORKLOAD_DURATION_SECONDS": "0.2"},
                        gpus=1, terminationMessagePolicy="FallbackToLogsOnError"), gpus=1)

    async def body(kl):
        await drive(kl, lambda: phase(state, "train-fail") in ("Succeeded", "Failed"), what="failure")

    asyncio.run(with_kubelet(state, body))
    t = terminated(state, "train-fail")
    assert phase(state, "train-fail") == "Failed"
    assert (t["exitCode"], t["reason"]) == (3, "Error")
    assert "TrainingDiverged" in t["message"], t
    assert cstate(state, "train-fail")["restartCount"] == 0, "restartPolicy Never never restarts"
    assert any("Traceback (most recent call last)" in line for line in log_lines(state, "train-fail"))
    assert state.inventory.held_by((NS, "train-fail")) == []


def test_memory_over_limit_is_oomkilled_with_exit_137(tmp_path):
    state = make_state(tmp_path)
    bind(state, pod_obj("oom", WORKLOAD, {"WORKLOAD_MODE": "oom", "WORKLOAD_OOM_MIB": "400"},
                        resources={"limits": {"memory": "150Mi"}}))

    async def body(kl):
        await drive(kl, lambda: phase(state, "oom") in ("Succeeded", "Failed"), what="OOM kill")

    asyncio.run(with_kubelet(state, body))
    t = terminated(state, "oom")
    assert (t["exitCode"], t["reason"]) == (137, "OOMKilled"), t
    assert phase(state, "oom") == "Failed"
    assert not any("reached the cap" in line for line in log_lines(state, "oom")), "killed before the cap"


def test_unknown_image_gets_err_image_pull_then_image_pull_backoff(tmp_path):
    state = make_state(tmp_path, image_backoff_seconds=0.3)
    image = "registry.example.com/team/missing:1.0"
    bind(state, pod_obj("nopull", image, gpus=1), gpus=1)
    reasons_seen = []

    async def body(kl):
        def backoff():
            reasons_seen.append(cstate(state, "nopull")["state"].get("waiting", {}).get("reason")
                                if get(state, "nopull")["status"].get("containerStatuses") else None)
            return reasons_seen[-1] == "ImagePullBackOff"
        await drive(kl, backoff, what="ImagePullBackOff")

    asyncio.run(with_kubelet(state, body))
    assert "ErrImagePull" in reasons_seen and reasons_seen.index("ErrImagePull") < len(reasons_seen) - 1
    assert phase(state, "nopull") == "Pending"
    ev = events(state, "nopull")
    assert ("Normal", "Pulling", f'Pulling image "{image}"') in ev
    assert ("Warning", "Failed", f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull '
            f'and unpack image "{image}": failed to resolve reference "{image}": {image}: not found') in ev
    assert ("Warning", "Failed", "Error: ErrImagePull") in ev
    assert ("Normal", "BackOff", f'Back-off pulling image "{image}"') in ev
    assert ("Warning", "Failed", "Error: ImagePullBackOff") in ev
    assert cstate(state, "nopull")["state"]["waiting"]["message"] == f'Back-off pulling image "{image}"'
    assert len(state.inventory.held_by((NS, "nopull"))) == 1, "GPUs stay allocated during image back-off"
    assert as_v1pod(get(state, "nopull")).status.container_statuses[0].state.waiting.reason == "ImagePullBackOff"


def test_virtual_pod_runs_its_duration_reports_telemetry_and_exit_code(tmp_path):
    state = make_state(tmp_path)
    env = {"WORKLOAD_DURATION_SECONDS": "0.6", "WORKLOAD_GPU_UTIL": "77", "WORKLOAD_GPU_MEM_MIB": "1234"}
    bind(state, pod_obj("virt-ok", VIRTUAL, env, gpus=4), gpus=4)
    bind(state, pod_obj("virt-bad", VIRTUAL, {"WORKLOAD_DURATION_SECONDS": "0.2", "WORKLOAD_EXIT_CODE": "2"}))
    telemetry_running = []

    async def body(kl):
        def done():
            if phase(state, "virt-ok") == "Running":
                telemetry_running.append(state.inventory.telemetry.get((NS, "virt-ok")))
            return all(phase(state, n) in ("Succeeded", "Failed") for n in ("virt-ok", "virt-bad"))
        await drive(kl, done, what="virtual pods")

    asyncio.run(with_kubelet(state, body))
    assert phase(state, "virt-ok") == "Succeeded" and terminated(state, "virt-ok")["exitCode"] == 0
    assert phase(state, "virt-bad") == "Failed"
    assert (terminated(state, "virt-bad")["exitCode"], terminated(state, "virt-bad")["reason"]) == (2, "Error")
    assert telemetry_running and (telemetry_running[-1].util, telemetry_running[-1].mem_mib) == (77.0, 1234.0)
    assert (NS, "virt-ok") not in state.inventory.telemetry, "an ended pod reports nothing"
    lines = log_lines(state, "virt-ok")
    assert lines[0].startswith("virtual workload gpupoc/virtual:1.0") and lines[-1] == "workload finished"
    assert state.inventory.free_count(NODE) == 8


def test_gpus_leak_fault_keeps_failed_pods_gpus_even_after_deletion(tmp_path):
    state = make_state(tmp_path, faults=(Fault.GPUS_LEAK,))
    bind(state, pod_obj("leaky", VIRTUAL, {"WORKLOAD_DURATION_SECONDS": "0.1", "WORKLOAD_EXIT_CODE": "1"},
                        gpus=2), gpus=2)
    bind(state, pod_obj("fine", VIRTUAL, {"WORKLOAD_DURATION_SECONDS": "0.1"}, gpus=2), gpus=2)

    async def body(kl):
        await drive(kl, lambda: phase(state, "leaky") == "Failed" and phase(state, "fine") == "Succeeded")
        pod = get(state, "leaky")
        pod["metadata"]["deletionTimestamp"] = clock.rfc3339()
        pod["metadata"]["deletionGracePeriodSeconds"] = 0
        state.store.update("pods", pod)
        await drive(kl, lambda: get(state, "leaky") is None, what="deletion")

    asyncio.run(with_kubelet(state, body))
    assert len(state.inventory.held_by((NS, "leaky"))) == 2, "the leaked GPUs stay held"
    assert state.inventory.held_by((NS, "fine")) == [], "succeeded pods still release theirs"
    assert state.inventory.free_count(NODE) == 6


def test_logs_lost_on_failure_fault_clears_the_failed_containers_log(tmp_path):
    state = make_state(tmp_path, faults=(Fault.LOGS_LOST_ON_FAILURE,))
    bind(state, pod_obj("lost", VIRTUAL, {"WORKLOAD_DURATION_SECONDS": "0.1", "WORKLOAD_EXIT_CODE": "1"}))
    bind(state, pod_obj("kept", VIRTUAL, {"WORKLOAD_DURATION_SECONDS": "0.1"}))

    async def body(kl):
        await drive(kl, lambda: phase(state, "lost") == "Failed" and phase(state, "kept") == "Succeeded")

    asyncio.run(with_kubelet(state, body))
    assert log_lines(state, "lost") == [] and state.logs.get(NS, "lost", "base").closed
    assert log_lines(state, "kept"), "successful containers keep their log"


def test_process_receives_allocated_gpu_uuids_and_pod_identity(tmp_path):
    state = make_state(tmp_path)
    script = ("import os; print(os.environ['NVIDIA_VISIBLE_DEVICES']); "
              "print(os.environ['POD_NAME'], os.environ['POD_NAMESPACE'], os.environ['NODE_NAME'], "
              "os.environ['HOSTNAME'], os.environ['MY_POD'])")
    pod = pod_obj("env", "python:3.11", gpus=3, command=["python", "-c", script])
    pod["spec"]["containers"][0]["env"] = [
        {"name": "MY_POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
    bind(state, pod, gpus=3)
    uuids = ",".join(g.uuid for g in state.inventory.held_by((NS, "env")))

    async def body(kl):
        await drive(kl, lambda: phase(state, "env") in ("Succeeded", "Failed"))

    asyncio.run(with_kubelet(state, body))
    assert phase(state, "env") == "Succeeded", log_lines(state, "env")
    assert log_lines(state, "env") == [uuids, f"env {NS} {NODE} env env"]
    assert len(uuids.split(",")) == 3 and all(u.startswith("GPU-") for u in uuids.split(","))


def test_missing_executable_is_a_start_error_with_exit_128(tmp_path):
    state = make_state(tmp_path)
    bind(state, pod_obj("noexec", "busybox:1.36", command=["definitely-not-a-binary-xyz"]))

    async def body(kl):
        await drive(kl, lambda: phase(state, "noexec") in ("Succeeded", "Failed"))

    asyncio.run(with_kubelet(state, body))
    t = terminated(state, "noexec")
    assert (t["exitCode"], t["reason"]) == (128, "StartError")
    assert 'exec: "definitely-not-a-binary-xyz": executable file not found in $PATH' in t["message"]
    assert any(r == "Failed" and m.startswith("Error: failed to create containerd task")
               for _, r, m in events(state, "noexec"))


def test_deletion_stops_the_process_and_removes_pod_logs_and_gpus(tmp_path):
    state = make_state(tmp_path)
    bind(state, pod_obj("hang", WORKLOAD, {"WORKLOAD_MODE": "hang", "WORKLOAD_DURATION_SECONDS": "0.2"}, gpus=2),
         gpus=2)
    pids = []

    async def body(kl):
        await drive(kl, lambda: any("all-reduce" in line for line in log_lines(state, "hang")), what="hang")
        pids.extend(h.pid for h in kl.pods[(NS, "hang")].handles.values())
        pod = get(state, "hang")
        pod["metadata"]["deletionTimestamp"] = clock.rfc3339(clock.now() + timedelta(seconds=30))
        pod["metadata"]["deletionGracePeriodSeconds"] = 30
        state.store.update("pods", pod)
        await drive(kl, lambda: get(state, "hang") is None, what="removal")

    asyncio.run(with_kubelet(state, body))
    assert pids and not psutil.pid_exists(pids[0]), "the container process is gone"
    assert state.logs.get(NS, "hang", "base") is None
    assert state.inventory.held_by((NS, "hang")) == [] and state.inventory.free_count(NODE) == 8
    ev = [e for e in state.store.list("events", NS) if e["involvedObject"]["name"] == "hang"]
    killing = [e for e in ev if e["reason"] == "Killing"]
    assert killing and killing[0]["message"] == "Stopping container base"
    assert killing[0]["involvedObject"]["fieldPath"] == "spec.containers{base}"


def test_restart_policy_on_failure_restarts_in_place_with_crash_loop_backoff(tmp_path):
    state = make_state(tmp_path)
    bind(state, pod_obj("crashy", VIRTUAL, {"WORKLOAD_DURATION_SECONDS": "0.05", "WORKLOAD_EXIT_CODE": "4"},
                        restart_policy="OnFailure"))
    waiting = []

    async def body(kl):
        def restarted_twice():
            cs = cstate(state, "crashy") if get(state, "crashy")["status"].get("containerStatuses") else {}
            waiting.append(cs.get("state", {}).get("waiting", {}).get("reason"))
            return cs.get("restartCount", 0) >= 2
        await drive(kl, restarted_twice, what="two restarts")

    asyncio.run(with_kubelet(state, body))
    cs = cstate(state, "crashy")
    assert phase(state, "crashy") == "Running", "a restarting pod is not Failed"
    assert cs["lastState"]["terminated"]["exitCode"] == 4
    assert "CrashLoopBackOff" in waiting
    assert any(r == "BackOff" and m.startswith("Back-off restarting failed container base in pod crashy_")
               for _, r, m in events(state, "crashy"))
    assert state.logs.previous(NS, "crashy", "base") is not None


def test_pod_on_a_node_that_is_not_ready_waits_until_the_node_is_back(tmp_path):
    from gpupoc.sim.controllers import nodes

    state = make_state(tmp_path)
    nodes.fail_node(state, NODE)
    bind(state, pod_obj("parked", VIRTUAL, {"WORKLOAD_DURATION_SECONDS": "0.1"}))

    async def body(kl):
        for _ in range(5):
            await kl.reconcile()
            await asyncio.sleep(0.05)
        assert phase(state, "parked") == "Pending" and kl.pods == {}
        nodes.recover_node(state, NODE)
        await drive(kl, lambda: phase(state, "parked") == "Succeeded", what="start after recovery")

    asyncio.run(with_kubelet(state, body))


@pytest.mark.parametrize("text,expected", [
    ("150Mi", 150 * 2**20), ("1Gi", 2**30), ("2G", 2e9), ("512M", 512e6), ("1000k", 1e6), ("1K", 1e3),
    ("500m", 0.5), ("1048576", 2**20), ("1.5Gi", 1.5 * 2**30), ("1e3", 1000),
])
def test_parse_quantity_understands_kubernetes_suffixes(text, expected):
    assert ks.parse_quantity(text) == expected


def test_parse_quantity_refuses_garbage_with_the_value_and_a_fix():
    with pytest.raises(ValueError, match=r"'12 bananas'.*e.g. 512Mi"):
        ks.parse_quantity("12 bananas")


def test_qos_class_follows_kubernetes_rules():
    def pod(res):
        return {"spec": {"containers": [{"name": "base", "resources": res}]}}
    assert ks.qos_class(pod({})) == "BestEffort"
    assert ks.qos_class(pod({"limits": {"nvidia.com/gpu": "1"}})) == "BestEffort"
    assert ks.qos_class(pod({"requests": {"memory": "1Gi"}})) == "Burstable"
    assert ks.qos_class(pod({"limits": {"cpu": "1", "memory": "1Gi"}})) == "Guaranteed"
    assert ks.qos_class(pod({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}})) == "Burstable"


def test_process_pod_telemetry_reaches_the_inventory(tmp_path):
    state = make_state(tmp_path)
    bind(state, pod_obj("busy", WORKLOAD, {"WORKLOAD_DURATION_SECONDS": "20", "WORKLOAD_GPU_UTIL": "60",
                                           "WORKLOAD_GPU_MEM_MIB": "5000"}, gpus=1), gpus=1)

    async def body(kl):
        def training():
            t = state.inventory.telemetry.get((NS, "busy"))
            return t is not None and t.util > 30 and t.mem_mib > 4000
        await drive(kl, training, what="telemetry from the workload's file")
        pod = get(state, "busy")
        pod["metadata"]["deletionTimestamp"] = clock.rfc3339()
        pod["metadata"]["deletionGracePeriodSeconds"] = 0
        state.store.update("pods", pod)
        await drive(kl, lambda: get(state, "busy") is None, what="removal")

    asyncio.run(with_kubelet(state, body))
    assert (NS, "busy") not in state.inventory.telemetry
    assert not kl_telemetry_file(state, "busy").exists(), "the telemetry file goes with the pod"


def kl_telemetry_file(state, name):
    return state.data_dir / "telemetry" / NS / f"{name}.json"


def test_deleting_a_pod_stuck_in_image_pull_backoff_removes_it_and_frees_gpus(tmp_path):
    state = make_state(tmp_path, image_backoff_seconds=5)
    bind(state, pod_obj("stuck", "nowhere/none:1", gpus=2), gpus=2)

    async def body(kl):
        await drive(kl, lambda: get(state, "stuck")["status"].get("containerStatuses") is not None
                    and cstate(state, "stuck")["state"].get("waiting", {}).get("reason") == "ErrImagePull")
        pod = get(state, "stuck")
        pod["metadata"]["deletionTimestamp"] = clock.rfc3339()
        pod["metadata"]["deletionGracePeriodSeconds"] = 3600  # prompt: long before its grace period ends
        state.store.update("pods", pod)
        await drive(kl, lambda: get(state, "stuck") is None, what="prompt removal")

    asyncio.run(with_kubelet(state, body))
    assert state.inventory.free_count(NODE) == 8
    assert not any(r == "Killing" for _, r, _ in events(state, "stuck")), "no container was running"


def test_pod_with_two_containers_ends_when_both_have_ended(tmp_path):
    state = make_state(tmp_path)
    pod = pod_obj("duo", VIRTUAL, {"WORKLOAD_DURATION_SECONDS": "0.1"})
    pod["spec"]["containers"].append({"name": "sidecar", "image": VIRTUAL,
                                      "env": [{"name": "WORKLOAD_DURATION_SECONDS", "value": "0.6"}]})
    bind(state, pod)
    phases = []

    async def body(kl):
        def done():
            phases.append(phase(state, "duo"))
            return phases[-1] in ("Succeeded", "Failed")
        await drive(kl, done)

    asyncio.run(with_kubelet(state, body))
    statuses = {c["name"]: c for c in get(state, "duo")["status"]["containerStatuses"]}
    assert set(statuses) == {"base", "sidecar"}
    assert all(c["state"]["terminated"]["exitCode"] == 0 for c in statuses.values())
    assert phases[-1] == "Succeeded" and "Running" in phases


def test_status_of_a_pod_on_an_unreachable_node_is_published_when_the_node_returns(tmp_path):
    from gpupoc.sim.controllers import nodes

    state = make_state(tmp_path)
    bind(state, pod_obj("quiet", VIRTUAL, {"WORKLOAD_DURATION_SECONDS": "0.3"}))  # tolerates unreachable 300 s

    async def body(kl):
        await drive(kl, lambda: phase(state, "quiet") == "Running")
        nodes.fail_node(state, NODE)
        await asyncio.sleep(0.6)
        await kl.reconcile()
        assert phase(state, "quiet") == "Running", "an unreachable kubelet posts nothing"
        nodes.recover_node(state, NODE)
        await drive(kl, lambda: phase(state, "quiet") == "Succeeded", what="status after recovery")

    asyncio.run(with_kubelet(state, body))


def test_container_ends_when_its_main_process_exits_even_if_children_linger(tmp_path):
    state = make_state(tmp_path)
    bind(state, pod_obj("orphan", "busybox:1.36", command=["sh", "-c", "sleep 300 & echo started; exit 0"]))

    async def body(kl):
        await drive(kl, lambda: phase(state, "orphan") in ("Succeeded", "Failed"))

    asyncio.run(with_kubelet(state, body))
    assert phase(state, "orphan") == "Succeeded" and log_lines(state, "orphan") == ["started"]


def test_one_kubelet_per_cluster_state(tmp_path):
    from gpupoc.sim.controllers.kubelet import Kubelet, kubelet_for

    state = make_state(tmp_path)
    first = Kubelet(state)
    assert Kubelet(state) is first and kubelet_for(state) is first
    assert Kubelet(make_state(tmp_path / "other")) is not first


def test_active_deadline_fails_the_pod_and_stops_its_container(tmp_path):
    state = make_state(tmp_path, termination_grace_seconds=0.5)
    bind(state, pod_obj("late", VIRTUAL, {"WORKLOAD_MODE": "hang"}, gpus=1, node=NODE), gpus=1)
    get(state, "late")["spec"]["activeDeadlineSeconds"] = 1

    async def body(kl):
        await drive(kl, lambda: phase(state, "late") == "Failed", what="deadline")

    asyncio.run(with_kubelet(state, body))
    st = get(state, "late")["status"]
    assert (st["reason"], st["message"]) == ("DeadlineExceeded",
                                             "Pod was active on the node longer than the specified deadline")
    assert ("Warning", "DeadlineExceeded", st["message"]) in events(state, "late")
    assert "terminated" in cstate(state, "late")["state"]
    assert state.inventory.held_by((NS, "late")) == []


def test_env_from_secrets_resolves_and_a_missing_secret_blocks_the_container(tmp_path):
    import base64

    state = make_state(tmp_path)
    token = base64.b64decode(state.store.get("secrets", NS, "team-vision-registry-token")["data"]["token"]).decode()
    ok = pod_obj("secret-ok", "python:3.11", command=["python", "-c", "import os; print(os.environ['TOKEN'])"])
    ok["spec"]["containers"][0]["env"] = [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {
        "name": "team-vision-registry-token", "key": "token"}}}]
    bind(state, ok)
    missing = pod_obj("secret-missing", VIRTUAL)
    missing["spec"]["containers"][0]["env"] = [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {
        "name": "nope", "key": "token"}}}]
    bind(state, missing)

    async def body(kl):
        def settled():
            cs = get(state, "secret-missing")["status"].get("containerStatuses") or [{}]
            blocked = cs[0].get("state", {}).get("waiting", {}).get("reason") == "CreateContainerConfigError"
            return blocked and phase(state, "secret-ok") == "Succeeded"
        await drive(kl, settled, what="secret resolution")

    asyncio.run(with_kubelet(state, body))
    assert log_lines(state, "secret-ok") == [token]
    assert cstate(state, "secret-missing")["state"]["waiting"]["message"] == 'secret "nope" not found'
    assert phase(state, "secret-missing") == "Pending"
    assert ("Warning", "Failed", 'Error: secret "nope" not found') in events(state, "secret-missing")


ORPHAN_SCRIPT = r"""
import asyncio, sys
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from kubelet_helpers import WORKLOAD, NS, bind, drive, log_lines, make_state, pod_obj
from gpupoc.sim.controllers.kubelet import Kubelet

async def main():
    state = make_state(Path(sys.argv[1]))
    bind(state, pod_obj("orphan-check", WORKLOAD, {"WORKLOAD_MODE": "hang", "WORKLOAD_DURATION_SECONDS": "0.1"}))
    kl = Kubelet(state)
    await drive(kl, lambda: any("all-reduce" in l for l in log_lines(state, "orphan-check")))
    print(next(iter(kl.pods[(NS, "orphan-check")].handles.values())).pid, flush=True)
    await asyncio.sleep(60)

asyncio.run(main())
"""


def test_container_processes_die_with_the_simulator(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    from tests.waiting import first_truthy

    proc = subprocess.Popen([sys.executable, "-c", ORPHAN_SCRIPT, str(tmp_path), os.path.dirname(__file__)],
                            stdout=subprocess.PIPE, text=True)
    pid = None
    try:
        pid = int(proc.stdout.readline())
        assert psutil.pid_exists(pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=5)
        # it dies at once; a loaded machine may take seconds to schedule it
        first_truthy(f"container process {pid} to end with the simulator",
                     lambda: not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE,
                     step_seconds=60, poll=0.1)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if pid is not None and psutil.pid_exists(pid):
            os.kill(pid, signal.SIGKILL)  # never leave a container behind, even when the test fails
