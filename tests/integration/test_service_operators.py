"""A plan service created and deleted with the cncf.kubernetes provider's own KubernetesCreateResourceOperator
and KubernetesDeleteResourceOperator, as a tenant, against the simulated cluster (docs/services.md)."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.integration.conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("service-operators")]

NS = "team-serving"


def tenant_kubeconfig(sim, tmp_path) -> str:
    """The plain-HTTP kubeconfig with the tenant's context current (the hook uses the current context)."""
    config = yaml.safe_load(sim.kubeconfig_http.read_text())
    config["current-context"] = "team-serving"
    path = tmp_path / "kubeconfig-team-serving"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def test_the_provider_operators_create_and_delete_a_service_as_the_tenant(sim_server, tmp_path):
    from airflow.providers.cncf.kubernetes.operators.resource import (
        KubernetesCreateResourceOperator, KubernetesDeleteResourceOperator)

    from gpupoc.podspec.service import service_objects
    from tests.unit.podspec.service_plan import plan_with_service

    plan = plan_with_service()
    workload = next(w for w in plan.workloads if w.name == "svc-echo")
    tenant = next(t for t in plan.tenants if t.name == "team-serving")
    made = service_objects(workload, tenant, plan, run_id="manual__1", test_class="queue_congestion")
    doc = yaml.safe_dump_all([made.deployment, made.service])
    config = tenant_kubeconfig(sim_server, tmp_path)
    KubernetesCreateResourceOperator(task_id="create_service", yaml_conf=doc, namespace=NS, kubernetes_conn_id=None,
                                     config_file=config).execute({})
    sim_server.kubectl("rollout", "status", "deployment/svc-echo", "-n", NS, "--timeout=240s", check=True,
                       timeout=260)
    KubernetesDeleteResourceOperator(task_id="delete_service", yaml_conf=doc, namespace=NS, kubernetes_conn_id=None,
                                     config_file=config).execute({})

    def gone() -> bool:
        left = json.loads(sim_server.kubectl("get", "deploy,rs,svc,pods", "-n", NS, "-o", "json",
                                             check=True).stdout)["items"]
        return not [o for o in left if "svc-echo" in o["metadata"]["name"]
                    and not o["metadata"].get("deletionTimestamp")]

    wait_for("the Deployment, its ReplicaSet, pods and the Service gone", gone)
    writes = {(e["verb"], e["objectRef"]["resource"]): e["user"]["username"] for e in sim_server.audit_events()
              if e["objectRef"].get("name") == "svc-echo" and e["verb"] in ("create", "delete")}
    tenant_sa = "system:serviceaccount:team-serving:runner"
    assert writes[("create", "deployments")] == writes[("delete", "deployments")] == tenant_sa
    assert writes[("create", "services")] == writes[("delete", "services")] == tenant_sa
