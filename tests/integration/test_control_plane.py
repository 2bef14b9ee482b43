"""The real control plane (``make control-plane``'s binaries) with a two-pool plan's KWOK GPU nodes: pods built
by the pod builder run, end after their run time with their exit code, are OOMKilled, fail to pull a missing
image, or hang, as the catalogue says; ``kubectl logs`` reads a workload's lines; a second start resumes and a
stop leaves no process."""

from __future__ import annotations

import datetime as dt
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml
from kubernetes.client import ApiClient

from gpupoc.common.processes import process_running
from gpupoc.controlplane import start_control_plane
from gpupoc.controlplane.nodes import node_names
from gpupoc.controlplane.pod_logs import write_pod_log
from gpupoc.plan import DEFAULT_PLAN, load_plan
from gpupoc.plan.model import Pool
from gpupoc.podspec import build_pod
from tests.waiting import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("control-plane"), pytest.mark.timeout(900)]

PLAN = load_plan(DEFAULT_PLAN)
POOLS = [Pool.model_validate({**PLAN.pool("training").model_dump(), "nodes": 2, "node_names": []}),
         Pool.model_validate({**PLAN.pool("inference").model_dump(), "nodes": 1, "node_names": []})]
NS = "team-vision"
STEP = 60.0  # one step of a start or of a pod's lifecycle on a loaded machine
RUN_SECONDS = 4


class Hook(BaseHTTPRequestHandler):
    """The audit webhook backend's receiver: keeps every EventList posted."""

    batches: list[dict] = []

    def do_POST(self):  # noqa: N802
        Hook.batches.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def hook():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/audit"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def cp(tmp_path_factory, hook):
    plane = start_control_plane(tmp_path_factory.mktemp("control-plane"), pools=POOLS, plan=PLAN,
                                audit_webhook_url=hook)
    try:
        plane.run_kubectl("create", "namespace", NS)
        plane.run_kubectl("create", "priorityclass", "gpupoc-normal", "--value=1000")
        wait_for("the namespace's default ServiceAccount", lambda: plane.run_kubectl(
            "get", "serviceaccount", "default", "-n", NS, check=False), lambda r: r.returncode == 0,
            step_seconds=STEP, describe=lambda r: r.stderr.strip()[-200:])
        yield plane
    finally:
        plane.stop()


def pod_json(cp, name: str) -> dict:
    return json.loads(cp.run_kubectl("get", "pod", name, "-n", NS, "-o", "json").stdout)


def submit(cp, workload: str, name: str, **update) -> None:
    w = PLAN.workload(workload).model_copy(update=update)
    pod = ApiClient().sanitize_for_serialization(build_pod(w, PLAN.tenant(NS), PLAN, run_id="cp-test",
                                                           test_class="fault_recovery", wave_gate=False, name=name))
    cp.run_kubectl("create", "-f", "-", input=yaml.safe_dump(pod))


def state_of(pod: dict) -> dict:
    return ((pod.get("status") or {}).get("containerStatuses") or [{}])[0].get("state") or {}


def wait_pod(cp, name: str, done, what: str) -> dict:
    return wait_for(f"pod {name} {what}", lambda: pod_json(cp, name), done, step_seconds=STEP,
                    describe=lambda p: f"{p['status'].get('phase')} {state_of(p)}")


def ts(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_the_pools_nodes_are_ready_with_their_gpus_and_labels(cp):
    nodes = {n["metadata"]["name"]: n for n in json.loads(cp.run_kubectl("get", "nodes", "-o", "json").stdout)["items"]}
    for p in POOLS:
        for name in node_names(p):
            n = nodes[name]
            assert n["status"]["allocatable"]["nvidia.com/gpu"] == str(p.gpus_per_node)
            assert all(n["metadata"]["labels"][k] == v for k, v in p.node_selector.items())
            assert n["metadata"]["labels"]["nvidia.com/gpu.product"] == "-".join(p.gpu_model.split())
            assert any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])
    assert cp.run_kubectl("version", "-o", "json").stdout.count(cp.version) == 2


def test_workloads_end_as_the_catalogue_says(cp):
    submit(cp, "hang", "hangs", duration_seconds=1)  # were its run time played, it would end first
    submit(cp, "v-train-1g", "completes", duration_seconds=RUN_SECONDS)
    submit(cp, "fail-exit", "exits", duration_seconds=2)
    submit(cp, "oom-kill", "oom", duration_seconds=2)
    done = wait_pod(cp, "completes", lambda p: p["status"].get("phase") == "Succeeded", "to succeed")
    term = state_of(done)["terminated"]
    assert (term["exitCode"], term["reason"]) == (0, "Completed")
    assert ts(term["finishedAt"]) - ts(term["startedAt"]) >= dt.timedelta(seconds=RUN_SECONDS - 1), term
    exits = wait_pod(cp, "exits", lambda p: p["status"].get("phase") == "Failed", "to fail")
    assert (state_of(exits)["terminated"]["exitCode"], state_of(exits)["terminated"]["reason"]) == (3, "Error")
    oom = wait_pod(cp, "oom", lambda p: p["status"].get("phase") == "Failed", "to be OOMKilled")
    assert (state_of(oom)["terminated"]["exitCode"], state_of(oom)["terminated"]["reason"]) == (137, "OOMKilled")
    hang = pod_json(cp, "hangs")  # it started before the others and outlived every one of them
    assert hang["status"]["phase"] == "Running" and "running" in state_of(hang)


def test_a_missing_image_fails_to_pull_then_backs_off(cp):
    submit(cp, "missing-image", "no-image")
    seen: set[str] = set()

    def reasons(p):
        seen.add((state_of(p).get("waiting") or {}).get("reason", ""))
        return p
    wait_for("pod no-image to show ErrImagePull then ImagePullBackOff", lambda: reasons(pod_json(cp, "no-image")),
             lambda p: {"ErrImagePull", "ImagePullBackOff"} <= seen, step_seconds=STEP,
             describe=lambda p: f"{sorted(seen)}")
    assert pod_json(cp, "no-image")["status"]["phase"] == "Pending"


def test_kubectl_logs_reads_the_workloads_lines(cp):
    submit(cp, "v-train-1g", "logs", duration_seconds=300)
    wait_pod(cp, "logs", lambda p: p["status"].get("phase") == "Running", "to run")
    write_pod_log(cp, NS, "logs", ["virtual workload: mode=train", "step=100 loss=0.8333"])
    out = wait_for("kubectl logs of pod logs", lambda: cp.run_kubectl("logs", "logs", "-n", NS, check=False),
                   lambda r: r.returncode == 0 and "step=100" in r.stdout, step_seconds=STEP,
                   describe=lambda r: (r.stdout + r.stderr)[-200:])
    assert out.stdout.splitlines() == ["virtual workload: mode=train", "step=100 loss=0.8333"]


def pod_creates(events) -> list[dict]:
    return [e for e in events if e.get("verb") == "create" and (e.get("objectRef") or {}).get("resource") == "pods"
            and (e.get("objectRef") or {}).get("namespace") == NS and e.get("stage") == "ResponseComplete"
            and not e["objectRef"].get("subresource")]  # a binding is a pods/binding create


def test_the_plans_audit_policy_logs_pod_writes_to_the_log_and_the_webhook(cp):
    logged = pod_creates(json.loads(line) for line in cp.audit_log.read_text().splitlines() if line.strip())
    assert logged and all(e["level"] == "RequestResponse" for e in logged)
    hooked = wait_for("the audit webhook's batches", lambda: pod_creates(
        e for b in list(Hook.batches) for e in b.get("items", [])), lambda es: len(es) >= len(logged),
        step_seconds=STEP, describe=lambda es: f"{len(es)} pod creates of {len(logged)}")
    assert {e["auditID"] for e in logged} <= {e["auditID"] for e in hooked}


def test_a_second_start_resumes_and_a_stop_leaves_no_process(cp):
    pids = cp.pids()
    again = start_control_plane(cp.root, pools=POOLS, plan=PLAN)
    assert again.server == cp.server and again.pids() == pids
    assert all(" (resumed)" in k for k in again.timings if k not in ("total", "nodes applied"))
    assert json.loads(again.run_kubectl("get", "pod", "hangs", "-n", NS, "-o", "json").stdout)["status"]["phase"] \
        == "Running"
    stopped = again.stop()
    assert sorted(stopped) == sorted(pids) and not any(process_running(p) for p in pids.values())


def test_a_stopped_control_plane_starts_again_on_its_data(cp):
    restarted = start_control_plane(cp.root, pools=POOLS, plan=PLAN)
    try:
        assert restarted.server == cp.server
        assert json.loads(restarted.run_kubectl("get", "pod", "hangs", "-n", NS, "-o", "json").stdout)["metadata"][
            "name"] == "hangs"
    finally:
        pids = restarted.pids()
        restarted.stop()
    assert all(pids.values()) and not any(process_running(p) for p in pids.values())
