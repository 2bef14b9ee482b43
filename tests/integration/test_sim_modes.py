"""Real kubectl against the simulated cluster in each scheduler mode: discovery, tables, CRUD, watch and status
of Volcano's, KAI's and Kueue's objects, gangs submitted the way each scheduler takes them."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from gpupoc.sim.config import shipped_config
from gpupoc.sim.modes import SchedulerMode

from .conftest import kubectl_bin, launch, wait_for


pytestmark = [pytest.mark.integration]

POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {labels}
  annotations: {annotations}
spec:
  schedulerName: {scheduler}
  restartPolicy: Never
  nodeSelector: {{gpupoc.io/pool: training}}
  tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
  containers:
  - name: main
    image: gpupoc/virtual:1
    env: [{{name: WORKLOAD_DURATION_SECONDS, value: "120"}}]
    resources:
      limits: {{nvidia.com/gpu: {gpus}}}
"""


def create_pod(sim, name, ns, gpus, scheduler="default-scheduler", labels=None, annotations=None, context=None):
    body = POD.format(name=name, scheduler=scheduler, gpus=gpus, labels=json.dumps(labels or {}),
                      annotations=json.dumps(annotations or {}))
    sim.kubectl("create", "-n", ns, "-f", "-", check=True, input=body, context=context or ns)


def get_json(sim, *args, context="admin"):
    return json.loads(sim.kubectl("get", *args, "-o", "json", check=True, context=context).stdout)


def rows(sim, *args) -> list[list[str]]:
    return [line.split() for line in sim.kubectl("get", *args, check=True).stdout.splitlines()]


def start(tmp_path_factory, mode: str):
    return launch(tmp_path_factory.mktemp(mode), config=shipped_config(SchedulerMode(mode)))


@pytest.fixture(scope="module")
def volcano(tmp_path_factory):
    server = start(tmp_path_factory, "volcano")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def kai(tmp_path_factory):
    server = start(tmp_path_factory, "kai")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def kueue(tmp_path_factory):
    server = start(tmp_path_factory, "kueue")
    yield server
    server.stop()


# -- Volcano ---------------------------------------------------------------------------------------
def test_volcano_serves_its_group_and_queues(volcano):
    resources = volcano.kubectl("api-resources", "--api-group=scheduling.volcano.sh", check=True).stdout
    assert "podgroups" in resources and "queues" in resources and "pg,podgroup-v1beta1" in resources
    assert "kueue.x-k8s.io" not in volcano.kubectl("api-versions", check=True).stdout
    table = rows(volcano, "queues.scheduling.volcano.sh")
    assert table[0] == ["NAME", "PARENT"] and [r[0] for r in table[1:]] == ["default", "team-nlp", "team-serving",
                                                                            "team-vision"]
    queue = get_json(volcano, "queue", "team-vision")
    assert queue["spec"]["guarantee"] == {"resource": {"nvidia.com/gpu": "4"}} and queue["status"]["state"] == "Open"


def test_volcano_gang_from_kubectl_runs_whole_and_reports_on_the_podgroup(volcano):
    pg = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "pair"},
          "spec": {"minMember": 2, "queue": "team-vision", "minResources": {"nvidia.com/gpu": "8"}}}
    volcano.kubectl("create", "-n", "team-vision", "-f", "-", check=True, input=json.dumps(pg), context="team-vision")
    for i in range(2):
        create_pod(volcano, f"pair-{i}", "team-vision", 4, "volcano",
                   annotations={"scheduling.k8s.io/group-name": "pair"})
    wait_for("the gang to run", lambda: get_json(volcano, "podgroup", "pair", "-n", "team-vision")
             .get("status", {}).get("phase") == "Running")
    table = rows(volcano, "podgroups", "-n", "team-vision")
    assert table[0] == ["NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE"]
    assert table[1][:4] == ["pair", "Running", "2", "2"]
    events = get_json(volcano, "events", "-n", "team-vision", "--field-selector", "involvedObject.name=pair")
    assert ("Scheduled", "pod group is ready") in {(e["reason"], e["message"]) for e in events["items"]}


def test_volcano_gang_that_cannot_fit_waits_whole_with_volcanos_condition(volcano):
    pg = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "wide"},
          "spec": {"minMember": 4, "queue": "team-nlp"}}
    volcano.kubectl("create", "-n", "team-nlp", "-f", "-", check=True, input=json.dumps(pg), context="team-nlp")
    for i in range(4):
        create_pod(volcano, f"wide-{i}", "team-nlp", 6, "volcano", annotations={"scheduling.k8s.io/group-name": "wide"})
    cond = wait_for("the Unschedulable condition", lambda: next(
        (c for c in get_json(volcano, "podgroup", "wide", "-n", "team-nlp").get("status", {}).get("conditions") or []
         if c["type"] == "Unschedulable"), None))
    assert cond["reason"] == "NotEnoughResources" and "tasks in gang unschedulable" in cond["message"]
    pods = get_json(volcano, "pods", "-n", "team-nlp", "-l", "")["items"]
    assert not [p for p in pods if p["metadata"]["name"].startswith("wide-") and p["spec"].get("nodeName")]


def test_volcano_queue_patch_status_watch_and_delete(volcano):
    volcano.kubectl("patch", "queues.scheduling.volcano.sh", "team-nlp", "--type", "merge", "-p",
                    '{"spec": {"weight": 3}}', check=True)
    assert get_json(volcano, "queue", "team-nlp")["spec"]["weight"] == 3
    volcano.kubectl("create", "-f", "-", check=True, input=json.dumps(
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "scratch"},
         "spec": {"weight": 1}}))
    watched = volcano.kubectl("get", "queues", "--watch", "--request-timeout=2s")
    assert "scratch" in watched.stdout
    volcano.kubectl("delete", "queue", "scratch", check=True)
    assert "scratch" not in volcano.kubectl("get", "queues", check=True).stdout


# -- KAI -------------------------------------------------------------------------------------------------
def test_kai_serves_queues_v2_and_podgroups_v2alpha2(kai):
    versions = kai.kubectl("api-versions", check=True).stdout.split()
    assert "scheduling.run.ai/v2" in versions and "scheduling.run.ai/v2alpha2" in versions
    table = rows(kai, "queues.scheduling.run.ai")
    assert table[0] == ["NAME", "PRIORITY", "PARENT", "CHILDREN", "DISPLAYNAME"]
    assert ["team-vision", "100", "gpupoc"] == table[[r[0] for r in table].index("team-vision")][:3]


def test_kai_groups_a_bare_pod_and_refuses_over_its_queue_limit(kai):
    for i, gpus in enumerate((8, 1)):  # team-nlp: quota 8 (non-preemptible), limit 24
        create_pod(kai, f"np-{i}", "team-nlp", gpus, "kai-scheduler", labels={"kai.scheduler/queue": "team-nlp"})
    pod = wait_for("the pod-grouper", lambda: (get_json(kai, "pod", "np-1", "-n", "team-nlp")["metadata"]
                                               .get("annotations") or {}).get("pod-group-name"))
    group = get_json(kai, "podgroups.scheduling.run.ai", pod, "-n", "team-nlp")
    assert group["apiVersion"] == "scheduling.run.ai/v2alpha2" and group["spec"]["queue"] == "team-nlp"
    conds = wait_for("the scheduling condition", lambda: get_json(kai, "podgroup", pod, "-n", "team-nlp")
                     .get("status", {}).get("schedulingConditions"))
    assert conds[-1]["type"] == "UnschedulableOnNodePool"
    assert conds[-1]["reasons"][0]["reason"] == "NonPreemptibleOverQuota"
    assert get_json(kai, "queue", "team-nlp")["status"]["allocatedNonPreemptible"] == {"nvidia.com/gpu": "8"}


# -- Kueue ------------------------------------------------------------------------------------------------
def test_kueue_objects_in_one_get_and_a_pod_group_admitted_whole(kueue):
    out = kueue.kubectl("get", "clusterqueues,localqueues,workloads,resourceflavors", "-A", check=True).stdout
    assert "team-vision-training" in out and "training-shared" in out and "resourceflavor.kueue.x-k8s.io/training" in out
    cq_rows = rows(kueue, "clusterqueues")
    assert cq_rows[0][:2] == ["NAME", "COHORT"] and cq_rows[1][:2] == ["team-nlp-training", "training"]
    labels = {"kueue.x-k8s.io/queue-name": "training", "kueue.x-k8s.io/pod-group-name": "trio"}
    for i in range(3):
        create_pod(kueue, f"trio-{i}", "team-vision", 4, labels=labels,
                   annotations={"kueue.x-k8s.io/pod-group-total-count": "3"})
    wl = wait_for("the group's Workload admitted", lambda: next(
        (w for w in get_json(kueue, "workloads", "-n", "team-vision")["items"] if w["metadata"]["name"] == "trio"
         and any(c["type"] == "Admitted" and c["status"] == "True" for c in w["status"].get("conditions") or [])),
        None))
    assert wl["spec"]["podSets"][0]["count"] == 3
    gates = [get_json(kueue, "pod", f"trio-{i}", "-n", "team-vision")["spec"].get("schedulingGates") for i in range(3)]
    assert gates == [None, None, None]


def test_kueue_positions_from_the_visibility_api_and_a_cluster_queue_created_by_kubectl(kueue):
    # team-vision takes its nominal share of the cohort, so team-nlp's 24 GPUs cannot all be admitted
    for i in range(2):
        create_pod(kueue, f"hold-{i}", "team-vision", 4, labels={"kueue.x-k8s.io/queue-name": "training"})
    for i in range(6):
        create_pod(kueue, f"fill-{i}", "team-nlp", 4, labels={"kueue.x-k8s.io/queue-name": "training"})
    raw = wait_for("pending workloads", lambda: json.loads(kueue.kubectl(
        "get", "--raw", "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/team-nlp-training/pendingworkloads",
        check=True).stdout)["items"])
    assert [i["positionInClusterQueue"] for i in raw] == list(range(len(raw)))
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "scratch"},
          "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
              {"name": "training", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "1"}]}]}]}}
    kueue.kubectl("create", "-f", "-", check=True, input=json.dumps(cq))
    status = wait_for("the new ClusterQueue's status", lambda: get_json(kueue, "clusterqueue", "scratch")
                      .get("status", {}).get("conditions"))
    assert status[0]["type"] == "Active"
    kueue.kubectl("delete", "clusterqueue", "scratch", check=True)


# -- gpupoc sim serve --mode --------------------------------------------------------------------------------
def test_serve_mode_picks_the_shipped_config_of_the_mode(tmp_path):
    data = tmp_path / "d"
    proc = subprocess.Popen([sys.executable, "-m", "gpupoc.cli", "sim", "serve", "--mode", "kai", "--port", "0",
                             "--data-dir", str(data)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        info = wait_for("sim.json", lambda: (data / "sim.json").exists() and json.loads((data / "sim.json")
                                                                                        .read_text()), timeout=60)
        assert info["mode"] == "kai"
        out = subprocess.run([kubectl_bin(), f"--kubeconfig={info['kubeconfig']}", "--context=admin", "get",
                              "queues.scheduling.run.ai", "-o", "name"], capture_output=True, text=True, timeout=60)
        assert "queue.scheduling.run.ai/team-serving" in out.stdout
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        time.sleep(0)
