"""The real control plane's process runner (``controlplane/runner.py``): a workload pod on a KWOK node runs the
real program (``kubectl logs`` with the built kubectl shows its lines, its exit ends the pod), an artifact one pod
writes is read by the next, and a two-replica Deployment behind a Service answers the load pod's traffic through
the API server's port-forward, judged against its SLO (SVC-01's rule). Nothing dials a pod IP."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.request

import pytest
import yaml
from kubernetes.client import ApiClient

from gpupoc.common.processes import process_running
from gpupoc.controlplane import start_control_plane
from gpupoc.pipeline.service_slo import judge, parse_rows
from gpupoc.plan import DEFAULT_PLAN, load_plan
from gpupoc.plan.model import Pool
from gpupoc.podspec import build_pod
from gpupoc.podspec.service import service_objects
from tests.waiting import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("control-plane"), pytest.mark.timeout(900)]

PLAN = load_plan(DEFAULT_PLAN)
POOLS = [Pool.model_validate({**PLAN.pool("training").model_dump(), "nodes": 1, "node_names": []}),
         Pool.model_validate({**PLAN.pool("inference").model_dump(), "nodes": 1, "node_names": []})]
TRAIN_NS, SERVE_NS = "team-vision", "team-serving"
STEP = 60.0  # one step of a pod's life on a loaded machine
SHA = re.compile(r"sha256[= ]([0-9a-f]{64})")


@pytest.fixture(scope="module")
def cp(tmp_path_factory):
    plane = start_control_plane(tmp_path_factory.mktemp("control-plane"), pools=POOLS, plan=PLAN)
    try:
        for ns in (TRAIN_NS, SERVE_NS):
            plane.run_kubectl("create", "namespace", ns)
        for pc in sorted({c for t in PLAN.tenants for c in t.priority_classes}):
            plane.run_kubectl("create", "priorityclass", pc, f"--value={PLAN.priority_value(pc)}")
        for ns in (TRAIN_NS, SERVE_NS):
            wait_for(f"{ns}'s default ServiceAccount", lambda ns=ns: plane.run_kubectl(
                "get", "serviceaccount", "default", "-n", ns, check=False), lambda r: r.returncode == 0,
                step_seconds=STEP, describe=lambda r: r.stderr.strip()[-200:])
        yield plane
    finally:
        plane.stop()


def pod_json(cp, ns: str, name: str) -> dict:
    return json.loads(cp.run_kubectl("get", "pod", name, "-n", ns, "-o", "json").stdout)


def submit(cp, workload: str, ns: str, name: str, **update) -> None:
    w = PLAN.workload(workload).model_copy(update=update)
    pod = ApiClient().sanitize_for_serialization(build_pod(w, PLAN.tenant(ns), PLAN, run_id="cp-processes",
                                                           test_class="fault_recovery", wave_gate=False, name=name))
    cp.run_kubectl("create", "-f", "-", input=yaml.safe_dump(pod))


def ended(cp, ns: str, name: str) -> dict:
    return wait_for(f"pod {name} to end", lambda: pod_json(cp, ns, name),
                    lambda p: p["status"].get("phase") in ("Succeeded", "Failed"), step_seconds=STEP,
                    describe=lambda p: f"{p['status'].get('phase')} {p['status'].get('containerStatuses')}")


def terminated(pod: dict) -> dict:
    return pod["status"]["containerStatuses"][0]["state"]["terminated"]


def logs(cp, ns: str, name: str) -> str:
    return cp.run_kubectl("logs", name, "-n", ns).stdout


@pytest.fixture(scope="module")
def trained(cp):
    submit(cp, "train-artifact", TRAIN_NS, "trainer", args=["--mode", "train", "--duration", "2"],
           duration_seconds=2)
    return ended(cp, TRAIN_NS, "trainer"), logs(cp, TRAIN_NS, "trainer")


def test_a_workload_pod_runs_the_real_program_and_kubectl_logs_shows_its_lines(trained):
    pod, text = trained
    assert (terminated(pod)["exitCode"], terminated(pod)["reason"], pod["status"]["phase"]) == \
        (0, "Completed", "Succeeded"), pod["status"]
    assert f"mode=train pod={TRAIN_NS}/trainer" in text, text
    assert "artifact: " in text and SHA.search(text), text


def test_the_programs_own_exit_code_ends_its_pod(cp):
    submit(cp, "fail-exit", TRAIN_NS, "fails", args=["--mode", "fail", "--duration", "1", "--exit-code", "5"],
           duration_seconds=600)  # were its run time played, it would still run
    pod = ended(cp, TRAIN_NS, "fails")
    assert (terminated(pod)["exitCode"], terminated(pod)["reason"]) == (5, "Error"), pod["status"]
    assert "error:" in logs(cp, TRAIN_NS, "fails")


def test_an_artifact_written_by_one_pod_is_read_by_the_next(cp, trained):
    written = SHA.search(trained[1]).group(1)
    submit(cp, "eval-artifact", TRAIN_NS, "evaluator",
           args=["--mode", "infer", "--duration", "1", "--artifact", "trainer"], duration_seconds=1)
    pod = ended(cp, TRAIN_NS, "evaluator")
    text = logs(cp, TRAIN_NS, "evaluator")
    assert pod["status"]["phase"] == "Succeeded", text
    assert written in SHA.findall(text) and "manifest match: yes" in text, f"the evaluator did not load {written}: {text}"


def ready_replicas(cp) -> int:
    d = json.loads(cp.run_kubectl("get", "deployment", "svc-infer", "-n", SERVE_NS, "-o", "json").stdout)
    return (d.get("status") or {}).get("readyReplicas") or 0


def predict_count(cp, pod: str) -> float:
    """The replica's own count of answered predictions, read through ``kubectl port-forward``."""
    pf = subprocess.Popen([str(cp.kubectl), f"--kubeconfig={cp.kubeconfig}", "port-forward", "-n", SERVE_NS,
                           "--address", "127.0.0.1", f"pod/{pod}", ":8080"], stdout=subprocess.PIPE, text=True)
    try:
        port = re.search(r"127\.0\.0\.1:(\d+) ->", pf.stdout.readline()).group(1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
            metrics = r.read().decode()
    finally:
        pf.terminate()
        pf.wait()
    return sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
               if line.startswith("gpupoc_serve_requests_total") and '"/v1/predict"' in line and '"200"' in line)


def test_a_two_replica_service_answers_its_traffic_through_port_forward(cp):
    objs = service_objects(PLAN.workload("svc-infer"), PLAN.tenant(SERVE_NS), PLAN, run_id="cp-processes",
                           test_class="queue_congestion", replicas=2, traffic_seconds=6)
    cp.run_kubectl("apply", "-f", "-", input=yaml.safe_dump_all([objs.deployment, objs.service]))
    wait_for("two ready replicas of svc-infer", lambda: ready_replicas(cp), lambda n: n == 2, step_seconds=STEP)
    cp.run_kubectl("create", "-f", "-", input=yaml.safe_dump(objs.load_pod))
    load = ended(cp, SERVE_NS, "svc-infer-load")
    text = logs(cp, SERVE_NS, "svc-infer-load")
    assert load["status"]["phase"] == "Succeeded", text
    spec = PLAN.workload("svc-infer").service
    result = judge(parse_rows(text, "svc-infer", "team-serving", spec.slo), spec.slo, "svc-infer")
    assert result.sent > 0 and result.held is True, result
    replicas = [p["metadata"]["name"] for p in json.loads(cp.run_kubectl(
        "get", "pods", "-n", SERVE_NS, "-l", "app.kubernetes.io/name=svc-infer", "-o", "json").stdout)["items"]]
    served = {r: predict_count(cp, r) for r in replicas}
    assert len(served) == 2 and all(n > 0 for n in served.values()), f"each replica's answers: {served}"


def test_a_stop_ends_the_runner_and_every_process_it_started(cp):
    runner_log = cp.layout.log_file("process-runner").read_text()
    started = [int(p) for p in re.findall(r"\(pid (\d+),", runner_log)]
    runner = int(cp.layout.pid_file("process-runner").read_text())
    assert started and process_running(runner)
    cp.stop()
    assert not process_running(runner) and not [p for p in started if process_running(p)]
    assert not cp.layout.pid_file("process-runner").exists()
