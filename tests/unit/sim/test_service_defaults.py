import pytest

from gpupoc.sim.api.service_defaults import deployment
from gpupoc.sim.api.status import StatusError


def _deployment(policy: str | None) -> dict:
    pod_spec = {"containers": [{"name": "main", "image": "gpupoc/virtual:1.0"}]}
    if policy:
        pod_spec["restartPolicy"] = policy
    return {"metadata": {"name": "web"}, "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
        "metadata": {"labels": {"app": "web"}}, "spec": pod_spec}}}


def test_a_deployments_pods_must_restart_always_as_the_api_server_says():
    with pytest.raises(StatusError) as refused:
        deployment(None, _deployment("Never"))
    assert refused.value.code == 422
    assert refused.value.status["message"] == ('Deployment.apps "web" is invalid: spec.template.spec.restartPolicy: '
                                               'Unsupported value: "Never": supported values: "Always"')


def test_a_deployment_without_a_restart_policy_gets_always():
    obj = _deployment(None)
    deployment(None, obj)
    assert obj["spec"]["template"]["spec"]["restartPolicy"] == "Always"
