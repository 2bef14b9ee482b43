"""A class's services as the steps prepare them (``steps/services.py``): names of their own per run, manifests
for the provider's resource operators, a load pod that keeps off its replicas' nodes, and the ledger of what the
tenants did."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import yaml

from gpupoc.podspec import labels as L
from gpupoc.steps import services as S

from ..pipeline.fake_api import pod


def test_each_run_and_class_names_its_service_apart_and_as_a_dns_label():
    a = S.service_name("manual__1", "queue_congestion", "svc-infer")
    assert a == S.service_name("manual__1", "queue_congestion", "svc-infer"), "a rerun finds its own objects"
    assert a != S.service_name("manual__1", "fault_recovery", "svc-infer")
    assert a != S.service_name("manual__2", "queue_congestion", "svc-infer")
    assert a.startswith("svc-infer-") and len(a) <= 63 and a.replace("-", "").isalnum()


def test_the_resource_operators_get_the_deployment_and_service_as_the_tenant_without_the_wave_s_label(make_ctx):
    ctx = make_ctx()
    [kw] = S.resource_kwargs(ctx)
    assert kw["namespace"] == "team-serving" and kw["cluster_context"] == "team-serving"
    dep, svc = yaml.safe_load_all(kw["yaml_conf"])
    assert (dep["kind"], svc["kind"]) == ("Deployment", "Service")
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert L.TEST_CLASS not in labels, "the wave's observer must never take a serving replica for a wave pod"
    assert labels[L.SERVICE_OF] == "queue_congestion" and labels[L.SERVICE] == dep["metadata"]["name"]
    env = {e["name"]: e["value"] for e in dep["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["WORKLOAD_WARMUP_SECONDS"] == "3" and dep["spec"]["replicas"] == 2
    assert S.load_kwargs(ctx) == [{"service": "svc-infer"}]


def test_only_services_with_traffic_get_a_load_pod(make_ctx):
    assert S.load_kwargs(make_ctx(test_class="tenant_isolation")) == []
    assert [kw["namespace"] for kw in S.resource_kwargs(make_ctx(test_class="tenant_isolation"))] == ["team-serving"]


def test_the_load_pod_keeps_off_the_nodes_of_the_replicas_it_measures(make_ctx):
    ctx = make_ctx()
    name = S.deployed(ctx)[0].name
    running = pod(f"{name}-abc", "team-serving", "x")
    running["spec"]["nodeName"] = "inference-node-1"
    ctx.factory.api.pods[("team-serving", running["metadata"]["name"])] = running
    manifest, tenant = S.load_pod(ctx, "svc-infer")
    assert tenant.name == "team-serving" and manifest["metadata"]["labels"][L.ROLE] == S.LOAD_ROLE
    terms = manifest["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"] == [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["inference-node-1"]}]}]
    args = manifest["spec"]["containers"][0]["args"]
    assert args[args.index("--duration") + 1] == "90", "the class's traffic_seconds override the workload's"


def test_a_load_pod_whose_replicas_fill_the_pool_is_placed_anywhere_in_it(make_ctx):
    ctx = make_ctx()
    name = S.deployed(ctx)[0].name
    for i, node in enumerate(("inference-node-1", "inference-node-2")):
        p = pod(f"{name}-{i}", "team-serving", "x")
        p["spec"]["nodeName"] = node
        ctx.factory.api.pods[("team-serving", p["metadata"]["name"])] = p
    manifest, _ = S.load_pod(ctx, "svc-infer")
    assert "affinity" not in manifest["spec"], "no node would be left for it"


def test_the_operators_writes_are_in_the_run_s_ledger_as_the_tenant(make_ctx):
    ctx = make_ctx(task="deploy_service")
    [kw] = S.resource_kwargs(ctx)
    S.ledger_writes(ctx, "create", kw["yaml_conf"], datetime(2026, 12, 1, tzinfo=timezone.utc), 201, "deploy")
    lines = [json.loads(x) for f in (ctx.run_dir / "ledger").glob("*.jsonl") for x in f.read_text().splitlines()]
    assert [(e["verb"], e["resource"], e["api_group"], e["status"]) for e in lines] == [
        ("create", "deployments", "apps", 201), ("create", "services", "", 201)]
    assert {e["username"] for e in lines} == {"system:serviceaccount:team-serving:runner"}
