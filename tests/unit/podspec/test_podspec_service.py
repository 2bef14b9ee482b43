"""A kind: service workload as a Deployment, a Service and a load pod; the plan's checks of its service part."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import ConfigError as PlanError
from gpupoc.podspec.service import APP_LABEL, service_objects

from .service_plan import plan_with_service


def objects(**overrides):
    plan = plan_with_service(**overrides)
    workload = next(w for w in plan.workloads if w.name == "svc-echo")
    tenant = next(t for t in plan.tenants if t.name == "team-serving")
    return service_objects(workload, tenant, plan, run_id="manual__1", test_class="queue_congestion")


def test_the_deployment_runs_the_workload_pod_with_its_port_probe_and_replicas():
    made = objects()
    dep = made.deployment
    assert dep["spec"]["replicas"] == 2 and dep["metadata"]["namespace"] == "team-serving"
    pod = dep["spec"]["template"]
    assert pod["metadata"]["labels"][APP_LABEL] == "svc-echo"
    assert dep["spec"]["selector"]["matchLabels"] == {APP_LABEL: "svc-echo"}
    spec = pod["spec"]
    assert spec["restartPolicy"] == "Always" and spec["priorityClassName"] == "gpupoc-critical"
    assert spec["nodeSelector"] == {"gpupoc.io/pool": "inference"} and "schedulingGates" not in spec
    [container] = spec["containers"]
    assert container["args"] == ["serve", "--port", "8080"] and container["ports"][0]["containerPort"] == 8080
    assert container["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert {"name": "WORKLOAD_LATENCY_MS", "value": "20"} in container["env"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"


def test_the_service_and_the_load_pod_point_at_each_other():
    made = objects()
    assert made.service["spec"]["selector"] == {APP_LABEL: "svc-echo"}
    assert made.service["spec"]["ports"] == [{"name": "http", "port": 8080, "targetPort": "http"}]
    load = made.load_pod["spec"]["containers"][0]
    assert load["args"][:3] == ["load", "--target", "http://${SVC_ECHO_SERVICE_HOST}:${SVC_ECHO_SERVICE_PORT}"
                                                    "/v1/predict"]
    assert load["args"][3:] == ["--rate", "4", "--duration", "3", "--timeout", "2", "--lag-bound-ms", "100"]
    assert "nvidia.com/gpu" not in str(load["resources"]) and made.load_pod["spec"]["restartPolicy"] == "Never"
    selector = made.service["spec"]["selector"].items()
    assert not selector <= made.load_pod["metadata"]["labels"].items(), "the Service would send traffic to the load pod"


def test_a_service_workload_needs_its_service_section_and_a_sane_slo():
    with pytest.raises(PlanError, match="p99_ms"):
        plan_with_service(slo={"availability_pct": 99, "p95_ms": 500, "p99_ms": 100})
    from pathlib import Path

    import yaml

    from gpupoc.plan import DEFAULT_PLAN, parse_plan
    from .service_plan import SERVICE_WORKLOAD

    raw = yaml.safe_load(Path(DEFAULT_PLAN).read_text())
    raw["workloads"].append({k: v for k, v in SERVICE_WORKLOAD.items() if k != "service"})
    with pytest.raises(PlanError, match="kind service needs a service: section"):
        parse_plan(raw)


def test_a_wave_may_not_submit_a_service_workload_as_a_pod():
    from pathlib import Path

    import yaml

    from gpupoc.plan import DEFAULT_PLAN, parse_plan
    from .service_plan import SERVICE_WORKLOAD

    raw = yaml.safe_load(Path(DEFAULT_PLAN).read_text())
    raw["workloads"].append(SERVICE_WORKLOAD)
    raw["test_classes"]["queue_congestion"]["wave"].append({"workload": "svc-echo", "tenant": "team-serving", "count": 1})
    with pytest.raises(PlanError, match="is kind service: it runs as a Deployment"):
        parse_plan(raw)
