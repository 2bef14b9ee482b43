"""Real kubectl against the simulated cluster with the generated kubeconfig."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.waiting import wait_for

pytestmark = [pytest.mark.integration]

POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {{app: kubectl-test, run: "{name}"}}
spec:
  restartPolicy: Never
  tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
  containers:
  - name: base
    image: gpupoc/virtual:1
    env: [{{name: WORKLOAD_DURATION_SECONDS, value: "{seconds}"}}]
    resources:
      limits: {{nvidia.com/gpu: {gpus}}}
"""


def create_pod(sim, name, seconds=2, gpus=1, ns="team-vision"):
    sim.kubectl("create", "-n", ns, "-f", "-", check=True,
                input=POD.format(name=name, seconds=seconds, gpus=gpus))


def wait_phase(sim, name, phases, ns="team-vision", timeout=120):  # a stall guard; ends when it holds
    return wait_for(f"pod {name} to be one of {phases}",
                    lambda: sim.kubectl("get", "pod", name, "-n", ns, "-o", "jsonpath={.status.phase}").stdout.strip(),
                    lambda phase: phase in phases, step_seconds=timeout, poll=0.3)


@pytest.fixture(scope="module")
def done_pod(sim_server):
    create_pod(sim_server, "kc-done", seconds=1)
    wait_phase(sim_server, "kc-done", ("Succeeded",))
    return "kc-done"


def test_get_nodes_table(sim_server):
    out = sim_server.kubectl("get", "nodes", check=True).stdout
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert len(lines) == 6 and all(" Ready " in line for line in lines[1:])


def test_get_nodes_wide_and_json(sim_server):
    wide = sim_server.kubectl("get", "nodes", "-o", "wide", check=True).stdout.splitlines()[0]
    assert "INTERNAL-IP" in wide and "CONTAINER-RUNTIME" in wide
    data = json.loads(sim_server.kubectl("get", "nodes", "-o", "json", check=True).stdout)
    assert data["kind"] == "List" and len(data["items"]) == 5
    assert data["items"][0]["status"]["capacity"]["nvidia.com/gpu"]


def test_get_pods_table_all_namespaces_and_selectors(sim_server, done_pod):
    out = sim_server.kubectl("get", "pods", "-A", check=True).stdout.splitlines()
    assert out[0].split() == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    row = next(line.split() for line in out if done_pod in line)
    assert row[0] == "team-vision" and row[2] == "0/1" and row[3] == "Completed"
    by_label = sim_server.kubectl("get", "pods", "-n", "team-vision", "-l", f"run={done_pod}", check=True).stdout
    assert done_pod in by_label
    none = sim_server.kubectl("get", "pods", "-n", "team-vision", "-l", "run=nobody", check=True)
    assert "No resources found" in none.stderr
    by_field = sim_server.kubectl("get", "pods", "-A", "--field-selector", "status.phase=Succeeded",
                                  "-o", "name", check=True).stdout
    assert f"pod/{done_pod}" in by_field.split()
    wide = sim_server.kubectl("get", "pods", "-n", "team-vision", "-o", "wide", check=True).stdout.splitlines()[0]
    assert wide.split()[-4:] == ["NODE", "NOMINATED", "NODE", "READINESS"] or "NOMINATED NODE" in wide


def test_get_pod_json_and_yaml(sim_server, done_pod):
    pod = json.loads(sim_server.kubectl("get", "pod", done_pod, "-n", "team-vision", "-o", "json", check=True).stdout)
    assert pod["kind"] == "Pod" and pod["status"]["phase"] == "Succeeded"
    y = yaml.safe_load(sim_server.kubectl("get", "pod", done_pod, "-n", "team-vision", "-o", "yaml", check=True).stdout)
    assert y["metadata"]["name"] == done_pod and y["spec"]["containers"][0]["name"] == "base"


def test_get_events_table(sim_server, done_pod):
    out = sim_server.kubectl("get", "events", "-n", "team-vision", check=True).stdout.splitlines()
    assert out[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert any("Scheduled" in line and f"pod/{done_pod}" in line for line in out)
    fs = sim_server.kubectl("get", "events", "-A", "--field-selector", f"involvedObject.name={done_pod}",
                            "-o", "json", check=True).stdout
    assert {e["involvedObject"]["name"] for e in json.loads(fs)["items"]} == {done_pod}


def test_get_resourcequotas(sim_server):
    from gpupoc.sim.config import load_cluster_config

    cfg = load_cluster_config(None)
    hard = next(t.quota.gpus for t in cfg.tenants if t.namespace == "team-nlp")
    out = sim_server.kubectl("get", "quota", "-A", check=True).stdout.splitlines()
    assert out[0].split() == ["NAMESPACE", "NAME", "AGE", "REQUEST", "LIMIT"]
    row = next(line for line in out if "team-nlp-gpu" in line)
    assert f"requests.nvidia.com/gpu: 0/{hard}" in row
    y = yaml.safe_load(sim_server.kubectl("get", "resourcequota", "team-nlp-gpu", "-n", "team-nlp", "-o", "yaml",
                                          check=True).stdout)
    assert y["status"]["hard"]["requests.nvidia.com/gpu"] == str(hard)


def test_describe_pod_shows_events(sim_server, done_pod):
    out = sim_server.kubectl("describe", "pod", done_pod, "-n", "team-vision", check=True).stdout
    assert f"Name:                 {done_pod}" in out or f"Name:         {done_pod}" in out
    assert "Priority Class Name:  gpupoc-normal" in out
    assert "Events:" in out and "Scheduled" in out and "Successfully assigned" in out


def test_logs_and_follow(sim_server, done_pod):
    out = sim_server.kubectl("logs", done_pod, "-n", "team-vision", check=True).stdout
    assert out.strip()
    # The follow must start while the container runs: 15 s of running outlast many slow kubectl polls of a
    # loaded machine (3 s did not: the pod had ended before a poll saw it Running).
    create_pod(sim_server, "kc-follow", seconds=15)
    wait_phase(sim_server, "kc-follow", ("Running",))
    res = sim_server.kubectl("logs", "-f", "kc-follow", "-n", "team-vision", "--timestamps", timeout=300, check=True)
    lines = res.stdout.strip().splitlines()
    assert lines and lines[0].split(" ", 1)[0].endswith("Z")
    assert lines[-1].endswith(" workload finished"), f"the follow ended before the container did: {lines[-3:]}"


def test_delete_running_pod_waits_until_gone(sim_server):
    create_pod(sim_server, "kc-delete", seconds=120)
    wait_phase(sim_server, "kc-delete", ("Running",))
    res = sim_server.kubectl("delete", "pod", "kc-delete", "-n", "team-vision", timeout=300, check=True)
    assert 'pod "kc-delete" deleted' in res.stdout
    gone = sim_server.kubectl("get", "pod", "kc-delete", "-n", "team-vision")
    assert gone.returncode != 0 and "NotFound" in gone.stderr


def test_cordon_and_uncordon(sim_server):
    assert "cordoned" in sim_server.kubectl("cordon", "inference-node-2", check=True).stdout
    row = next(line for line in sim_server.kubectl("get", "nodes", check=True).stdout.splitlines()
               if line.startswith("inference-node-2"))
    assert "Ready,SchedulingDisabled" in row
    assert "uncordoned" in sim_server.kubectl("uncordon", "inference-node-2", check=True).stdout
    row = next(line for line in sim_server.kubectl("get", "nodes", check=True).stdout.splitlines()
               if line.startswith("inference-node-2"))
    assert "SchedulingDisabled" not in row


def test_tenant_context_is_confined_to_its_namespace(sim_server):
    own = sim_server.kubectl("get", "pods", context="team-nlp")
    assert own.returncode == 0
    other = sim_server.kubectl("get", "pods", "-n", "team-vision", context="team-nlp")
    assert other.returncode != 0
    assert ('User "system:serviceaccount:team-nlp:runner" cannot list resource "pods" in API group "" in the '
            'namespace "team-vision"') in other.stderr


def test_auth_can_i_with_impersonation(sim_server):
    yes = sim_server.kubectl("auth", "can-i", "get", "pods/log", "-n", "team-nlp",
                             "--as", "system:serviceaccount:team-nlp:runner")
    assert yes.returncode == 0 and yes.stdout.strip() == "yes"
    no = sim_server.kubectl("auth", "can-i", "get", "pods/log", "-n", "team-nlp",
                            "--as", "system:serviceaccount:team-vision:runner")
    assert no.returncode == 1 and no.stdout.strip() == "no"


def test_apply_uses_server_side_field_validation(sim_server):
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kc-apply, namespace: team-nlp}\ndata: {a: '1'}\n"
    assert "created" in sim_server.kubectl("apply", "-f", "-", input=manifest, check=True).stdout
    changed = manifest.replace("a: '1'", "a: '2'")
    assert "configured" in sim_server.kubectl("apply", "-f", "-", input=changed, check=True).stdout
    data = json.loads(sim_server.kubectl("get", "cm", "kc-apply", "-n", "team-nlp", "-o", "json", check=True).stdout)
    assert data["data"] == {"a": "2"}


def test_describe_node_lists_its_pods_and_gpu_allocation(sim_server):
    create_pod(sim_server, "kc-node", seconds=60, gpus=2)
    wait_phase(sim_server, "kc-node", ("Running",))
    node = sim_server.kubectl("get", "pod", "kc-node", "-n", "team-vision", "-o", "jsonpath={.spec.nodeName}",
                              check=True).stdout
    out = sim_server.kubectl("describe", "node", node, check=True).stdout
    assert "kc-node" in out and "nvidia.com/gpu" in out
    sim_server.kubectl("delete", "pod", "kc-node", "-n", "team-vision", "--wait=false", check=True)


def test_drain_evicts_the_pods_of_a_node(sim_server):
    create_pod(sim_server, "kc-drain", seconds=120, ns="team-nlp")
    wait_phase(sim_server, "kc-drain", ("Running",), ns="team-nlp")
    node = sim_server.kubectl("get", "pod", "kc-drain", "-n", "team-nlp", "-o", "jsonpath={.spec.nodeName}",
                              check=True).stdout
    try:
        res = sim_server.kubectl("drain", node, "--force", "--ignore-daemonsets", "--timeout=60s", timeout=90)
        assert res.returncode == 0, res.stderr
        assert "pod/kc-drain evicted" in res.stdout and f"node/{node} drained" in res.stdout
        assert sim_server.kubectl("get", "pod", "kc-drain", "-n", "team-nlp").returncode != 0
    finally:
        sim_server.kubectl("uncordon", node)
