"""A vGPU share under DRA GPUs: the pod claims shared cards from its workload's ResourceClaimTemplate instead of
asking nvidia.com/gpu, and the manifests hold the template in every tenant namespace."""

import pytest
import yaml
from kubernetes.client import ApiClient

from gpupoc.cluster.manifests import manifest_documents
from gpupoc.exceptions import ConfigError
from gpupoc.kube.dra import SHARED_CLASS
from gpupoc.plan.loader import DEFAULT_PLAN, parse_plan
from gpupoc.podspec import build_pod

SHARED = "v-util-infer-1g"


def _data(gpus: str = "dra", **share) -> dict:
    data = yaml.safe_load(DEFAULT_PLAN.read_text())
    data["platform"]["options"]["gpus"] = gpus
    w = next(w for w in data["workloads"] if w["name"] == SHARED)
    w["vgpu"] = share or {"memory_mib": 12000}
    return data


def _pod(plan, workload: str = SHARED) -> dict:
    w = next(x for x in plan.workloads if x.name == workload)
    pod = build_pod(w, plan.tenants[2], plan, run_id="r1", test_class="utilization", wave_gate=False, name="p")
    return ApiClient().sanitize_for_serialization(pod)


def test_a_shared_workload_claims_shared_cards_and_asks_no_whole_gpu():
    plan = parse_plan(_data(), base_dir=DEFAULT_PLAN.parent)
    pod = _pod(plan)
    resources = pod["spec"]["containers"][0]["resources"]
    assert "nvidia.com/gpu" not in resources["requests"] and "nvidia.com/gpu" not in resources["limits"]
    assert resources["claims"] == [{"name": "gpu-share"}]
    assert pod["spec"]["resourceClaims"] == [{"name": "gpu-share",
                                              "resourceClaimTemplateName": f"{SHARED}-gpu-share"}]
    other = _pod(plan, "v-infer-1g")
    assert other["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert "resourceClaims" not in other["spec"], "a workload without a share still asks whole cards"


def test_the_manifests_hold_the_shares_template_in_every_tenant_namespace():
    plan = parse_plan(_data(), base_dir=DEFAULT_PLAN.parent)
    templates = [d.obj for d in manifest_documents(plan) if d.obj["kind"] == "ResourceClaimTemplate"]
    assert sorted(t["metadata"]["namespace"] for t in templates) == sorted(t.namespace for t in plan.tenants)
    [request] = templates[0]["spec"]["spec"]["devices"]["requests"]
    assert request == {"name": "gpu-share", "exactly": {
        "deviceClassName": SHARED_CLASS, "allocationMode": "ExactCount", "count": 1,
        "capacity": {"requests": {"memory": "12Gi"}}}}, "12000 MiB rounded up to the device's 1Gi steps"
    hami = _data("device-plugin")
    hami["platform"]["adapter"] = "hami"
    device_plugin = parse_plan(hami, base_dir=DEFAULT_PLAN.parent)
    assert not [d for d in manifest_documents(device_plugin) if d.obj["kind"] == "ResourceClaimTemplate"]


@pytest.mark.parametrize("share, field", [({"memory_percentage": 50}, "vgpu.memory_mib"),
                                          ({"memory_mib": 8000, "cores": 40}, "vgpu.cores")])
def test_a_share_dra_cannot_express_is_refused_naming_the_field(share, field):
    with pytest.raises(ConfigError) as err:
        parse_plan(_data(**share), base_dir=DEFAULT_PLAN.parent)
    assert any(e.startswith(f"workloads[") and f"].{field}:" in e for e in err.value.errors), err.value.errors
