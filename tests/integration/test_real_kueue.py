"""Real Kueue (``build.sh --with-kueue``) beside the real control plane: a ClusterQueue with 5 GPUs of quota,
a LocalQueue, and two plain pods with the queue label (Kueue's pod integration) asking 4 and 2 GPUs. The first
is admitted and runs on a KWOK node; the second stays gated, its Workload held with Kueue's own condition,
reason, message and event. A stop leaves no Kueue process. The wordings are the ones docs/real-cluster.md
records beside the simulated Kueue mode's."""

from __future__ import annotations

import json
import re

import pytest

from gpupoc.common.processes import process_running
from gpupoc.controlplane import BinariesMissing, control_plane_binaries, start_control_plane
from gpupoc.controlplane.kueue import start_kueue
from gpupoc.plan import DEFAULT_PLAN, load_plan
from gpupoc.plan.model import Pool
from tests.waiting import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("control-plane"), pytest.mark.timeout(900)]

PLAN = load_plan(DEFAULT_PLAN)
POOL = Pool.model_validate({**PLAN.pool("training").model_dump(), "nodes": 1, "node_names": []})
NS, CQ, LQ, FLAVOR = "team-vision", "cq-train", "lq-train", "training"
STEP = 120.0  # one step of a start, an admission or a pod's lifecycle on a loaded machine
GATES = ["kueue.x-k8s.io/admission", "kueue.x-k8s.io/topology"]  # the pod webhook's, in its order
HELD_MESSAGE = ("couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor "
                "training, 1 more needed")

QUEUES = f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {FLAVOR}}}
spec:
  nodeLabels: {{gpupoc.io/pool: training}}
  tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {CQ}}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{{name: {FLAVOR}, resources: [{{name: nvidia.com/gpu, nominalQuota: 5}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: {LQ}, namespace: {NS}}}
spec: {{clusterQueue: {CQ}}}
"""


def gpu_pod(name: str, gpus: int) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "namespace": NS, "labels": {"kueue.x-k8s.io/queue-name": LQ}},
        "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 0, "containers": [{
            "name": "main", "image": "gpupoc/virtual:1.0",
            "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}})


@pytest.fixture(scope="module")
def cp(tmp_path_factory):
    try:
        binaries = control_plane_binaries()
    except BinariesMissing as exc:
        pytest.skip(str(exc))
    if not (binaries.directory / "kueue").is_file():
        pytest.skip(f"Kueue is not built in {binaries.directory}: build it with `bash scripts/control-plane/"
                    "build.sh --with-kueue` (`make control-plane` runs it)")
    plane = start_control_plane(tmp_path_factory.mktemp("control-plane"), pools=[POOL], plan=PLAN)
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="module")
def kueue(cp):
    running = start_kueue(cp)
    cp.run_kubectl("create", "namespace", NS)
    cp.run_kubectl("apply", "-f", "-", input=QUEUES)
    return running


def get(cp, *args: str) -> dict:
    return json.loads(cp.run_kubectl("get", *args, "-o", "json").stdout)


def workload_of(cp, pod: str) -> dict | None:
    """The Workload Kueue made for ``pod`` (owned by it)."""
    items = get(cp, "workloads.kueue.x-k8s.io", "-n", NS)["items"]
    return next((w for w in items if any(o.get("name") == pod for o in w["metadata"].get("ownerReferences") or [])),
                None)


def condition(obj: dict | None, type_: str) -> dict:
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c["type"] == type_), {})


def events_of(cp, name: str) -> list[tuple[str, str, str, str]]:
    items = get(cp, "events", "-n", NS, "--field-selector", f"involvedObject.name={name}")["items"]
    return [(e["type"], e["reason"], e["message"], (e.get("source") or {}).get("component", "")) for e in items]


def test_the_first_pod_is_admitted_and_runs_and_the_second_is_held_with_kueue_s_own_words(cp, kueue, tmp_path):
    cp.run_kubectl("create", "-f", "-", input=gpu_pod("train-4", 4))
    admitted = wait_for("train-4's Workload admitted", lambda: workload_of(cp, "train-4"),
                        lambda w: condition(w, "Admitted").get("status") == "True", step_seconds=STEP,
                        describe=lambda w: json.dumps(((w or {}).get("status") or {}).get("conditions")))
    pod = wait_for("train-4 Running on a KWOK node", lambda: get(cp, "pod", "train-4", "-n", NS),
                   lambda p: p["status"].get("phase") == "Running", step_seconds=STEP,
                   describe=lambda p: json.dumps(p["status"])[-300:])
    assert pod["spec"]["nodeName"] == "training-node-1"
    assert not pod["spec"].get("schedulingGates")
    assert pod["spec"]["nodeSelector"]["gpupoc.io/pool"] == "training"  # the flavor's labels, injected
    assert condition(admitted, "QuotaReserved")["reason"] == "QuotaReserved"
    assert condition(admitted, "QuotaReserved")["message"] == f"Quota reserved in ClusterQueue {CQ}"
    assert (condition(admitted, "Admitted")["reason"], condition(admitted, "Admitted")["message"]) == \
        ("Admitted", "The workload is admitted")
    said = events_of(cp, admitted["metadata"]["name"])
    assert any(r == "QuotaReserved" and re.fullmatch(rf"Quota reserved in ClusterQueue {CQ}, wait time since queued "
                                                     r"was \d+s", m) and c == "kueue-admission"
               for _, r, m, c in said), said
    assert any(r == "Admitted" and re.fullmatch(rf"Admitted by ClusterQueue {CQ}, wait time since reservation was "
                                                r"\d+s", m) for _, r, m, _ in said), said

    cp.run_kubectl("create", "-f", "-", input=gpu_pod("train-2", 2))
    held = wait_for("train-2's Workload held for quota", lambda: workload_of(cp, "train-2"),
                    lambda w: condition(w, "QuotaReserved").get("reason") == "Pending", step_seconds=STEP,
                    describe=lambda w: json.dumps(((w or {}).get("status") or {}).get("conditions")))
    reserved = condition(held, "QuotaReserved")
    assert (reserved["status"], reserved["reason"], reserved["message"]) == ("False", "Pending", HELD_MESSAGE)
    assert condition(held, "Admitted") == {} or condition(held, "Admitted")["status"] == "False"
    gated = get(cp, "pod", "train-2", "-n", NS)
    assert [g["name"] for g in gated["spec"].get("schedulingGates") or []] == GATES
    assert gated["status"].get("phase") == "Pending" and not gated["spec"].get("nodeName")
    scheduled = condition(gated, "PodScheduled")
    assert (scheduled.get("status"), scheduled.get("reason")) == ("False", "SchedulingGated")
    pending = wait_for("the held Workload's Pending event", lambda: events_of(cp, held["metadata"]["name"]),
                       lambda ev: any(r == "Pending" for _, r, _, _ in ev), step_seconds=STEP, describe=repr)
    # what was seen, for docs/real-cluster.md's comparison with the simulated Kueue mode
    seen = {"admitted": admitted["status"], "held": held["status"], "held_pod": gated,
            "events": get(cp, "events", "-n", NS)["items"]}
    (tmp_path / "observed.json").write_text(json.dumps(seen, indent=1))
    assert ("Warning", "Pending", HELD_MESSAGE, "kueue-admission") in pending, pending


def test_a_stop_leaves_no_kueue_process(cp, kueue):
    pid = kueue.pid
    assert process_running(pid)
    assert "kueue" in cp.stop()
    assert not process_running(pid)
    assert not cp.layout.pid_file("kueue").exists()
