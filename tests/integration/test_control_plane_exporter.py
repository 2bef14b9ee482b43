"""gpupoc's exporter on the real control plane: a pod built by the pod builder runs on a KWOK GPU node, the exporter
(a process reading the API server through the admin kubeconfig) serves its GPU's dcgm-exporter series with the
pod's namespace, pod and GPU labels and the figures its workload claims, and kube-state-metrics' series of the
pod and node; the real Prometheus of `gpupoc stack up --metrics-url` scrapes them; a stop leaves no process."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request

import pytest
import yaml
from kubernetes.client import ApiClient

from gpupoc.common.processes import process_running
from gpupoc.controlplane import start_control_plane
from gpupoc.controlplane.exporter_process import running_exporter, spawn_exporter, stop_exporter
from gpupoc.monitoring import stack
from gpupoc.plan import DEFAULT_PLAN, load_plan
from gpupoc.plan.model import Pool
from gpupoc.podspec import build_pod
from tests.exposition import parse_exposition, series
from tests.waiting import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("control-plane"), pytest.mark.timeout(900)]

PLAN = load_plan(DEFAULT_PLAN)
POOLS = [Pool.model_validate({**PLAN.pool("training").model_dump(), "nodes": 1, "node_names": []})]
NS, POD, NODE = "team-vision", "trains", "training-node-1"
STEP = 60.0  # one step of a start or of a pod's lifecycle on a loaded machine


@pytest.fixture(scope="module")
def cp(tmp_path_factory):
    plane = start_control_plane(tmp_path_factory.mktemp("control-plane"), pools=POOLS, plan=PLAN)
    try:
        plane.run_kubectl("create", "namespace", NS)
        plane.run_kubectl("create", "priorityclass", "gpupoc-normal", "--value=1000")
        wait_for("the namespace's default ServiceAccount", lambda: plane.run_kubectl(
            "get", "serviceaccount", "default", "-n", NS, check=False), lambda r: r.returncode == 0,
            step_seconds=STEP, describe=lambda r: r.stderr.strip()[-200:])
        pod = ApiClient().sanitize_for_serialization(build_pod(
            PLAN.workload("v-train-1g").model_copy(update={"duration_seconds": 600}), PLAN.tenant(NS), PLAN,
            run_id="exporter-test", test_class="utilization", wave_gate=False, name=POD))
        plane.run_kubectl("create", "-f", "-", input=yaml.safe_dump(pod))
        wait_for(f"pod {POD} to run", lambda: json.loads(plane.run_kubectl(
            "get", "pod", POD, "-n", NS, "-o", "json").stdout), lambda p: p["status"].get("phase") == "Running",
            step_seconds=STEP, describe=lambda p: str(p["status"].get("phase")))
        yield plane
    finally:
        stop_exporter(plane.root)
        plane.stop()


@pytest.fixture(scope="module")
def exporter(cp):
    ex = spawn_exporter(cp.root)
    yield ex
    stop_exporter(cp.root)


def scrape(url: str) -> list:
    with urllib.request.urlopen(url, timeout=30) as r:
        return parse_exposition(r.read().decode())[0]


def test_the_running_pods_gpu_carries_its_labels_and_its_workloads_figures(exporter):
    samples = scrape(exporter.url + "/metrics")
    (labels, util), = series(samples, "DCGM_FI_DEV_GPU_UTIL", pod=POD)
    workload = PLAN.workload("v-train-1g")
    assert (labels["namespace"], labels["pod"], labels["container"], labels["Hostname"], labels["gpu"]) == \
        (NS, POD, "base", NODE, "0")
    assert labels["modelName"] == PLAN.pool("training").gpu_model
    assert util == workload.gpu_util
    assert series(samples, "DCGM_FI_DEV_FB_USED", pod=POD)[0][1] == workload.gpu_mem_mib
    free = [l["gpu"] for l, _ in series(samples, "DCGM_FI_DEV_GPU_UTIL", Hostname=NODE) if "pod" not in l]
    assert sorted(free, key=int) == [str(i) for i in range(1, PLAN.pool("training").gpus_per_node)]


def test_kube_state_metrics_series_come_from_the_api_servers_objects(exporter):
    samples = scrape(exporter.url + "/metrics/kube-state")
    assert series(samples, "kube_pod_status_phase", namespace=NS, pod=POD, phase="Running")[0][1] == 1
    (labels, _), = series(samples, "kube_pod_labels", pod=POD)
    assert labels["label_gpupoc_io_task_type"] == PLAN.workload("v-train-1g").task_type
    assert series(samples, "kube_node_status_capacity", node=NODE, resource="nvidia_com_gpu")[0][1] == \
        PLAN.pool("training").gpus_per_node
    (req, gpus), = series(samples, "kube_pod_container_resource_requests", pod=POD)
    assert (req["node"], gpus) == (NODE, 1)


def _query(prometheus: str, promql: str) -> list:
    try:
        with urllib.request.urlopen(f"{prometheus}/api/v1/query?query={urllib.parse.quote(promql)}", timeout=10) as r:
            return json.loads(r.read())["data"]["result"]
    except (OSError, ValueError, KeyError):
        return []


def test_the_real_prometheus_scrapes_the_exporter(exporter, tmp_path):
    state = stack.up(stack.StackOptions(data_dir=tmp_path / "monitoring", metrics_url=exporter.url,
                                        sim_json=tmp_path / "no-sim.json", scrape_interval="1s"))
    try:
        assert state["metrics_url"] == exporter.url and state["metrics_source"] == "exporter"
        prom = state["prometheus"]["url"]
        found = wait_for("the exporter's series in Prometheus", lambda: (
            _query(prom, f'DCGM_FI_DEV_GPU_UTIL{{pod="{POD}"}}'),
            _query(prom, f'kube_pod_status_phase{{pod="{POD}",phase="Running"}} == 1')),
            lambda r: all(r), step_seconds=STEP, describe=lambda r: f"{[len(x) for x in r]} series")
        assert found[0][0]["metric"]["job"] == "dcgm-exporter" and float(found[0][0]["value"][1]) == \
            PLAN.workload("v-train-1g").gpu_util
        assert found[1][0]["metric"]["namespace"] == NS
    finally:
        stack.down(tmp_path / "monitoring")


def test_a_second_start_reuses_it_and_a_stop_leaves_no_process(cp, exporter):
    assert spawn_exporter(cp.root) == exporter
    assert stop_exporter(cp.root) and not process_running(exporter.pid)
    assert running_exporter(cp.root) is None and not stop_exporter(cp.root)
