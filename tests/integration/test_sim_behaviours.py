"""Behaviour profiles of a correct platform, seen through the real HTTP API, kubectl and the Kubernetes client of
a `gpupoc sim serve --behaviour ...` subprocess."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request

import pytest
import yaml
from kubernetes import client, watch

from gpupoc.pipeline.k8s import ClientFactory
from gpupoc.sim.config import DEFAULT_CONFIG

from .conftest import wait_for

pytestmark = pytest.mark.integration

NS = "team-vision"


def _pod_yaml(name: str, gpus: int, priority_class: str, labels: dict | None = None) -> str:
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": "poc", "gpupoc.io/item": name, **(labels or {})},
                     "annotations": {"gpupoc.io/workload": name}},
        "spec": {"restartPolicy": "Never", "priorityClassName": priority_class,
                 "nodeSelector": {"gpupoc.io/pool": "training"},
                 "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                 "containers": [{"name": "base", "image": "gpupoc/virtual:1.0",
                                 "env": [{"name": "WORKLOAD_DURATION_SECONDS", "value": "600"}],
                                 "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}})


def _roomy_config(tmp_path) -> str:
    """The default cluster with tenant quotas above the pool's 24 GPUs (so only capacity makes pods wait)."""
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text())
    for t in raw["tenants"]:
        t["quota"]["gpus"] = 64
    path = tmp_path / "roomy.yaml"
    path.write_text(yaml.safe_dump(raw))
    return str(path)


def _pods(sim) -> list[dict]:
    out = sim.kubectl("get", "pods", "-n", NS, "-o", "json", check=True)
    return json.loads(out.stdout)["items"]


def test_sim_json_names_the_behaviours_and_the_seed(start_sim):
    sim = start_sim(behaviours="slow-api,audit-metadata", behaviour_seed=4)
    info = json.loads((sim.data_dir / "sim.json").read_text())
    assert (info["behaviours"], info["behaviour_seed"]) == (["audit-metadata", "slow-api"], 4)
    sim.kubectl("apply", "-f", "-", input=_pod_yaml("meta", 1, "gpupoc-low"), check=True)
    [create] = [e for e in sim.audit_events() if e["verb"] == "create" and e["objectRef"].get("name") == "meta"
                and not e["objectRef"].get("subresource")]  # the scheduler's binding is audited too
    assert create["level"] == "Metadata" and "requestObject" not in create and "responseObject" not in create


def test_throttled_api_refuses_with_429_and_retry_after_and_retrying_clients_get_through(start_sim):
    sim = start_sim(behaviours="throttled", behaviour_seed=1)
    refused = None
    for i in range(300):  # a client that does not retry sees the refusals
        req = urllib.request.Request(f"{sim.http_url}/api/v1/namespaces/{NS}/pods?limit={i}",
                                     headers={"Authorization": f"Bearer {sim.admin_token}"})
        try:
            urllib.request.urlopen(req, timeout=10).read()
        except urllib.error.HTTPError as exc:
            refused = (exc.code, exc.headers.get("Retry-After"), json.loads(exc.read()))
            break
    assert refused is not None, "300 requests and not one refused"
    code, retry_after, body = refused
    assert code in (429, 500, 503) and retry_after == "1"
    assert body["kind"] == "Status" and body["details"]["retryAfterSeconds"] == 1
    caller = ClientFactory(str(sim.kubeconfig_http)).caller("team-vision")
    answers = [caller.call("GET", f"/api/v1/namespaces/{NS}/pods", query={"limit": str(i)}).status for i in range(40)]
    assert answers == [200] * 40, "ApiCaller must retry throttled answers until it gets through"
    for _ in range(5):  # kubectl (client-go) retries too
        sim.kubectl("get", "pods", "-n", NS, check=True)


def test_watch_cuts_end_streams_and_the_kubernetes_client_watches_again(start_sim):
    sim = start_sim(behaviours="watch-cuts")
    core = client.CoreV1Api(sim.client("admin", http=True))
    seen: list[str] = []
    w = watch.Watch()

    def create_later() -> None:
        time.sleep(6.0)  # after the first cut (2-5 s), so only a new watch can see it
        sim.kubectl("apply", "-f", "-", input=_pod_yaml("late", 1, "gpupoc-low"), check=True)

    threading.Thread(target=create_later, daemon=True).start()
    deadline = time.monotonic() + 60
    rv = core.list_namespaced_pod(NS).metadata.resource_version  # list, then watch from there (as informers do)
    for ev in w.stream(core.list_namespaced_pod, NS, resource_version=rv, _request_timeout=30):
        seen.append(f"{ev['type']} {ev['object'].metadata.name}")
        if ev["object"].metadata.name == "late" or time.monotonic() > deadline:
            w.stop()
    assert "ADDED late" in seen


def test_volcano_wording_and_controller_recreates_through_kubectl_and_the_audit_log(start_sim, tmp_path):
    sim = start_sim(behaviours="volcano-wording,controller-recreates", config=_roomy_config(tmp_path))
    for name in ("low-a", "low-b", "low-c"):
        sim.kubectl("apply", "-f", "-", input=_pod_yaml(name, 8, "gpupoc-low"), check=True)
    wait_for("three low-priority pods bound",
             lambda: all(p["spec"].get("nodeName") for p in _pods(sim)) and len(_pods(sim)) == 3)
    sim.kubectl("apply", "-f", "-", input=_pod_yaml("too-big", 16, "gpupoc-low"), check=True)
    sim.kubectl("apply", "-f", "-", input=_pod_yaml("high-d", 8, "gpupoc-high"), check=True)

    def failed_scheduling():
        out = sim.kubectl("get", "events", "-n", NS, "--field-selector", "involvedObject.name=too-big", "-o", "json",
                          check=True)
        return [e for e in json.loads(out.stdout)["items"] if e["reason"] == "FailedScheduling"]

    [ev] = wait_for("a FailedScheduling event for too-big", failed_scheduling)
    assert ev["source"]["component"] == "volcano"
    assert ev["message"].startswith("0/5 nodes are unavailable: ") and "Insufficient nvidia.com/gpu" in ev["message"]

    def evicted():
        out = sim.kubectl("get", "events", "-n", NS, "--field-selector", "reason=Evict", "-o", "json", check=True)
        return json.loads(out.stdout)["items"]

    [evict] = wait_for("a Volcano Evict event", evicted)
    victim = evict["involvedObject"]["name"]
    assert evict["message"] == "Pod is evicted, because of preempt"

    def replacement():
        return [p for p in _pods(sim) if (p["metadata"].get("labels") or {}).get("job-name") == victim]

    [new] = wait_for(f"a replacement of {victim}", replacement)
    assert new["metadata"]["name"] != victim and new["metadata"]["labels"]["gpupoc.io/item"] == victim
    assert new["metadata"]["ownerReferences"][0]["kind"] == "Job"
    users = {(e["verb"], e["objectRef"].get("name")): e["user"]["username"] for e in sim.audit_events()
             if e["objectRef"].get("resource") == "pods" and not e["objectRef"].get("subresource")}
    assert users[("delete", victim)] == "system:serviceaccount:volcano-system:volcano-scheduler"
    assert users[("create", new["metadata"]["name"])] == "system:serviceaccount:kube-system:job-controller"
