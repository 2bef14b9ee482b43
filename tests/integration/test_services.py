"""Real kubectl against the simulated cluster's serving objects: a Deployment of the workload program's
``serve`` mode behind a Service, as a user applies them (docs/services.md)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml

from tests.integration.conftest import wait_for
from tests.waiting import wait_for as progressive_wait

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("services"),
              pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")]

NS = "team-serving"
CONTEXT = "team-serving"
MANIFEST = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: echo, labels: {app: echo}}
spec:
  replicas: 2
  selector: {matchLabels: {app: echo}}
  template:
    metadata: {labels: {app: echo}}
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: server
        image: gpupoc/workload:1.0
        args: [serve, --port, "8080", --train-seconds, "0.2"]
        ports: [{name: http, containerPort: 8080}]
        readinessProbe:
          httpGet: {path: /healthz, port: http}
          periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata: {name: echo}
spec:
  selector: {app: echo}
  ports: [{name: http, port: 80, targetPort: http}]
"""


PDB = """
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: echo}
spec: {minAvailable: 1, selector: {matchLabels: {app: echo}}}
"""


def kubectl(sim, *args, context=CONTEXT, check=True, timeout=60):
    return sim.kubectl(*args, "-n", NS, context=context, check=check, timeout=timeout)


def ready_pods(sim) -> list[str]:
    pods = json.loads(kubectl(sim, "get", "pods", "-l", "app=echo", "-o", "json").stdout)["items"]
    return sorted(p["metadata"]["name"] for p in pods
                  if not p["metadata"].get("deletionTimestamp")
                  and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", [])))


def slice_endpoints(sim) -> list[dict]:
    slices = json.loads(kubectl(sim, "get", "endpointslices", "-l", "kubernetes.io/service-name=echo",
                                "-o", "json").stdout)["items"]
    return [e for s in slices for e in s.get("endpoints") or []]


@pytest.fixture(scope="module")
def applied(sim_server):
    sim_server.kubectl("apply", "-n", NS, "-f", "-", context=CONTEXT, check=True, input=MANIFEST)
    return sim_server


def test_rollout_status_returns_once_both_replicas_are_ready(applied):
    out = kubectl(applied, "rollout", "status", "deployment/echo", "--timeout=240s", timeout=260).stdout
    assert 'deployment "echo" successfully rolled out' in out
    dep = json.loads(kubectl(applied, "get", "deployment", "echo", "-o", "json").stdout)
    assert dep["status"]["readyReplicas"] == 2 and dep["status"]["updatedReplicas"] == 2
    conditions = {c["type"]: c for c in dep["status"]["conditions"]}
    assert conditions["Available"]["reason"] == "MinimumReplicasAvailable"
    assert conditions["Progressing"]["reason"] == "NewReplicaSetAvailable"
    table = kubectl(applied, "get", "deployments").stdout.splitlines()
    assert table[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert table[1].split()[:4] == ["echo", "2/2", "2", "2"]


def test_endpointslices_list_the_ready_pods(applied):
    kubectl(applied, "rollout", "status", "deployment/echo", "--timeout=240s", timeout=260)
    wait_for("both pods in the EndpointSlice, ready",
             lambda: sorted(e["targetRef"]["name"] for e in slice_endpoints(applied)
                            if e["conditions"]["ready"]) == ready_pods(applied) and len(ready_pods(applied)) == 2)
    out = kubectl(applied, "get", "endpointslices").stdout
    assert out.splitlines()[0].split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert "8080" in out


def test_service_proxy_reaches_a_ready_replica(applied):
    kubectl(applied, "rollout", "status", "deployment/echo", "--timeout=240s", timeout=260)
    path = f"/api/v1/namespaces/{NS}/services/echo:http/proxy/healthz"
    assert kubectl(applied, "get", "--raw", path).stdout.strip() == "ok"
    predict = json.loads(kubectl(applied, "get", "--raw", f"/api/v1/namespaces/{NS}/services/echo:http/proxy/"
                                                          "v1/predict").stdout)
    assert predict["predictions"][0] in (0, 1)
    metrics = kubectl(applied, "get", "--raw", f"/api/v1/namespaces/{NS}/services/echo:http/proxy/metrics").stdout
    assert "gpupoc_serve_request_duration_seconds_bucket" in metrics


def test_a_tenant_cannot_scale_or_proxy_another_tenants_service(applied):
    denied = applied.kubectl("patch", "deployment/echo", "-n", NS, "--subresource=scale", "--type=merge",
                             "-p", '{"spec": {"replicas": 5}}', context="team-vision")
    assert denied.returncode != 0 and "forbidden" in denied.stderr
    assert json.loads(kubectl(applied, "get", "deployment", "echo", "-o", "json").stdout)["spec"]["replicas"] != 5
    refused = [e for e in applied.audit_events() if e["objectRef"].get("resource") == "deployments"
               and e["user"]["username"].startswith("system:serviceaccount:team-vision:")]
    assert refused and all(e["responseStatus"]["code"] == 403 for e in refused)
    proxied = applied.kubectl("get", "--raw", f"/api/v1/namespaces/{NS}/services/echo:http/proxy/healthz",
                              context="team-vision")
    assert proxied.returncode != 0 and "forbidden" in proxied.stderr.lower()


def test_a_deleted_replica_is_replaced_and_scale_changes_the_count(applied):
    kubectl(applied, "rollout", "status", "deployment/echo", "--timeout=240s", timeout=260)
    victim = ready_pods(applied)[0]
    kubectl(applied, "delete", "pod", victim, "--wait=false")
    wait_for(f"a replacement of {victim} ready",
             lambda: len(ready_pods(applied)) == 2 and victim not in ready_pods(applied), timeout=240)
    wait_for(f"{victim} gone from the EndpointSlice",
             lambda: victim not in [e["targetRef"]["name"] for e in slice_endpoints(applied)], timeout=240)
    kubectl(applied, "scale", "deployment/echo", "--replicas=1")
    wait_for("one replica after kubectl scale", lambda: len(ready_pods(applied)) == 1, timeout=240)
    scale = json.loads(kubectl(applied, "get", "--raw", f"/apis/apps/v1/namespaces/{NS}/deployments/echo/scale").stdout)
    assert scale["spec"]["replicas"] == 1 and scale["status"]["selector"] == "app=echo"
    users = {(e["verb"], e["objectRef"].get("subresource", "")): e["user"]["username"]
             for e in applied.audit_events() if e["objectRef"].get("resource") == "deployments"}
    assert users[("patch", "scale")] == "system:serviceaccount:team-serving:runner"
    assert users[("create", "")] == "system:serviceaccount:team-serving:runner"


def test_an_eviction_that_would_break_the_disruption_budget_is_refused(applied, tmp_path):
    kubectl(applied, "scale", "deployment/echo", "--replicas=1")
    wait_for("one ready replica", lambda: len(ready_pods(applied)) == 1, timeout=240)
    # applied as YAML: kubectl v1.37's typed `create poddisruptionbudget` posts protobuf, which the simulated
    # cluster does not read (docs/simulated-cluster.md, known limits)
    applied.kubectl("apply", "-n", NS, "-f", "-", context=CONTEXT, check=True, input=PDB)
    wait_for("the budget's status", lambda: json.loads(kubectl(applied, "get", "pdb", "echo", "-o", "json").stdout)
             .get("status", {}).get("currentHealthy") == 1)
    [pod] = ready_pods(applied)
    body = tmp_path / "eviction.json"
    body.write_text(json.dumps({"apiVersion": "policy/v1", "kind": "Eviction",
                                "metadata": {"name": pod, "namespace": NS}}))
    refused = kubectl(applied, "create", "--raw", f"/api/v1/namespaces/{NS}/pods/{pod}/eviction", "-f", str(body),
                      context="admin", check=False)  # a drain is the platform admin's
    assert refused.returncode != 0 and "disruption budget" in refused.stderr
    assert pod in ready_pods(applied), "the pod went despite its budget"
    table = kubectl(applied, "get", "pdb").stdout.splitlines()
    assert table[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"]
    assert table[1].split()[:4] == ["echo", "1", "N/A", "0"]


CLIENT_POD = """
apiVersion: v1
kind: Service
metadata: {name: echo-direct}
spec:
  selector: {app: echo}
  ports: [{name: http, port: 18080, targetPort: http}]
---
apiVersion: v1
kind: Pod
metadata: {name: echo-client}
spec:
  restartPolicy: Never
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: client
    image: gpupoc/workload:1.0
    command: [python, -c, "import os, urllib.request; print(urllib.request.urlopen('http://%s:%s/healthz' %
      (os.environ['ECHO_DIRECT_SERVICE_HOST'], os.environ['ECHO_DIRECT_SERVICE_PORT']), timeout=10).read().decode())"]
"""


def test_a_pod_reaches_a_service_by_its_cluster_ip_from_the_environment(applied):
    wait_for("a ready replica", lambda: len(ready_pods(applied)) >= 1, timeout=240)
    applied.kubectl("apply", "-n", NS, "-f", "-", context=CONTEXT, check=True,
                    input=CLIENT_POD.split("---")[0])
    wait_for("the echo-direct EndpointSlice with a ready endpoint", lambda: any(
        e["conditions"]["ready"] for s in json.loads(kubectl(applied, "get", "endpointslices", "-l",
                                                             "kubernetes.io/service-name=echo-direct", "-o",
                                                             "json").stdout)["items"]
        for e in s.get("endpoints") or []))
    applied.kubectl("apply", "-n", NS, "-f", "-", context=CONTEXT, check=True, input=CLIENT_POD.split("---")[1])
    phase = wait_for("the client pod to end", lambda: kubectl(applied, "get", "pod", "echo-client", "-o",
                                                             "jsonpath={.status.phase}").stdout.strip()
                     in ("Succeeded", "Failed") and kubectl(applied, "get", "pod", "echo-client", "-o",
                                                            "jsonpath={.status.phase}").stdout.strip(), timeout=240)
    logs = kubectl(applied, "logs", "echo-client").stdout
    assert phase == "Succeeded" and logs.strip() == "ok", logs


LIVENESS = """
apiVersion: v1
kind: Pod
metadata: {name: echo-unwell, labels: {app: unwell}}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: server
    image: gpupoc/workload:1.0
    args: [serve, --port, "8080", --train-seconds, "0.2"]
    livenessProbe: {httpGet: {path: /nowhere, port: 8080}, periodSeconds: 1, failureThreshold: 2}
    readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
"""


def test_a_failing_liveness_probe_restarts_the_container(applied):
    applied.kubectl("apply", "-n", NS, "-f", "-", context=CONTEXT, check=True, input=LIVENESS)

    def container() -> tuple:
        pod = json.loads(kubectl(applied, "get", "pod", "echo-unwell", "-o", "json").stdout)
        status = (pod["status"].get("containerStatuses") or [{}])[0]
        return (pod["status"].get("phase"), sorted((status.get("state") or {}).keys()),
                status.get("restartCount", 0), status.get("ready"))

    # each step (scheduling, the process starting, two failed probes, the kill, the back-off) makes progress
    # the wait sees; it fails only when nothing changed for a step's budget, naming the container's state
    progressive_wait("a restart after the liveness probe failed", container, lambda s: s[2] >= 1,
                     step_seconds=120, transient=(subprocess.SubprocessError, AssertionError, ValueError))
    events = json.loads(kubectl(applied, "get", "events", "--field-selector", "involvedObject.name=echo-unwell",
                                "-o", "json").stdout)["items"]
    messages = {(e["reason"], e["message"]) for e in events}
    # the first failures may be refused connections while the model loads; a 404 once it serves
    assert any(r == "Unhealthy" and m.startswith("Liveness probe failed: ") for r, m in messages), sorted(messages)
    assert ("Killing", "Container server failed liveness probe, will be restarted") in messages
    kubectl(applied, "delete", "pod", "echo-unwell", "--wait=false")


VIRTUAL = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: virtual}
spec:
  replicas: 2
  selector: {matchLabels: {app: virtual}}
  template:
    metadata: {labels: {app: virtual}}
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: server
        image: gpupoc/virtual:1
        args: [serve, --port, "8080"]
        env: [{name: WORKLOAD_LATENCY_MS, value: "60"}]
        readinessProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: virtual}
spec:
  selector: {app: virtual}
  ports: [{name: http, port: 8080}]
"""


def test_the_virtual_image_serves_with_its_configured_latency(applied):
    applied.kubectl("apply", "-n", NS, "-f", "-", context=CONTEXT, check=True, input=VIRTUAL)
    kubectl(applied, "rollout", "status", "deployment/virtual", "--timeout=240s", timeout=260)
    base = f"/api/v1/namespaces/{NS}/services/virtual:http/proxy"
    for _ in range(3):
        assert json.loads(kubectl(applied, "get", "--raw", f"{base}/v1/predict").stdout) == {"predictions": [0]}
    bucket: dict[str, int] = {}
    for pod in json.loads(kubectl(applied, "get", "pods", "-l", "app=virtual", "-o", "json").stdout)["items"]:
        # the Service's proxy picks a replica at random: each replica's own histogram, summed
        metrics = kubectl(applied, "get", "--raw",
                          f"/api/v1/namespaces/{NS}/pods/{pod['metadata']['name']}:8080/proxy/metrics").stdout
        for line in metrics.splitlines():
            if line.startswith("gpupoc_serve_request_duration_seconds_bucket"):
                le = line.split("{")[1].split("}")[0]
                bucket[le] = bucket.get(le, 0) + int(line.split()[-1])
    assert bucket['le="0.05"'] == 0 and bucket['le="+Inf"'] == 3, bucket  # each of the 3 answers took >= 60 ms


def test_a_plan_service_deploys_serves_its_traffic_and_holds_its_slo(applied):
    from gpupoc.pipeline.service_slo import judge, parse_rows
    from gpupoc.podspec.service import service_objects
    from tests.unit.podspec.service_plan import plan_with_service

    plan = plan_with_service()
    workload = next(w for w in plan.workloads if w.name == "svc-echo")
    tenant = next(t for t in plan.tenants if t.name == "team-serving")
    made = service_objects(workload, tenant, plan, run_id="manual__1", test_class="queue_congestion")
    applied.kubectl("apply", "-n", NS, "-f", "-", context=CONTEXT, check=True,
                    input=yaml.safe_dump_all([made.deployment, made.service]))
    kubectl(applied, "rollout", "status", "deployment/svc-echo", "--timeout=240s", timeout=260)
    applied.kubectl("apply", "-n", NS, "-f", "-", context=CONTEXT, check=True, input=json.dumps(made.load_pod))
    wait_for("the load pod to end", lambda: kubectl(applied, "get", "pod", "svc-echo-load", "-o",
                                                    "jsonpath={.status.phase}").stdout.strip()
             in ("Succeeded", "Failed"), timeout=240)
    log = kubectl(applied, "logs", "svc-echo-load").stdout
    rows = parse_rows(log, "svc-echo", tenant.name, workload.service.slo)
    result = judge(rows, workload.service.slo, "svc-echo")
    assert len(rows) == 3 and all(r.sent == 4 for r in rows), log
    assert result.held, result.reason
    assert all(r.p95_ms >= 20 for r in rows), "the virtual replicas answer after their configured 20 ms"
