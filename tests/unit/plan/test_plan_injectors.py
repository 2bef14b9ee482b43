"""The node-failure injector chosen per injection: the simulated cluster's endpoint only on the simulated
cluster, kubectl drain only with kubectl access, and a victim whose tolerations let it be evicted in time."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.plan import parse_plan
from gpupoc.plan.platform_kind import is_simulated

NODE = "test_classes.fault_recovery.injections[4]"


def node_failure(data: dict) -> dict:
    inj = data["test_classes"]["fault_recovery"]["injections"][4]
    assert inj["kind"] == "node_failure"
    return inj


def real_cluster(data: dict, tmp_path) -> dict:
    kubeconfig = tmp_path / "prod.kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    data["platform"] = dict(data["platform"], kubeconfig=str(kubeconfig), name="prod-kueue")
    return data


def errors_of(data: dict, base=None) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_plan(data, "plan.yaml", base_dir=base)
    return info.value.errors


def test_the_default_plan_is_the_simulated_cluster_and_keeps_the_sim_injector(data, tmp_path):
    plan = parse_plan(data, "plan.yaml", base_dir=tmp_path / "plans")
    assert is_simulated(plan) and plan.test_classes.fault_recovery.injections[4].injector.method == "sim"


def test_sim_is_refused_on_a_real_cluster_with_the_other_injectors_named(data, tmp_path):
    errs = errors_of(real_cluster(data, tmp_path))
    [err] = [e for e in errs if e.startswith(f"{NODE}.injector.method")]
    assert "platform 'prod-kueue' is not the simulated cluster" in err
    assert "choose command (your own fail and recover commands; on gpupoc's real control plane `gpupoc " \
        "controlplane node-stop {node}` and `node-start {node}`), taint or drain" in err


@pytest.mark.parametrize("injector", ["taint", {"method": "drain"},
                                      {"method": "command", "fail": "ssh {node} sudo systemctl stop kubelet",
                                       "recover": "ssh {node} sudo systemctl start kubelet"}])
def test_the_real_injectors_are_accepted_on_a_real_cluster(data, tmp_path, injector):
    node_failure(real_cluster(data, tmp_path))["injector"] = injector
    plan = parse_plan(data, "plan.yaml")
    assert not is_simulated(plan)
    method = injector if isinstance(injector, str) else injector["method"]
    inj = plan.test_classes.fault_recovery.injections[4]
    assert inj.injector.method == method
    assert inj.scenario == ("node_drain" if method == "drain" else "node_failure")


def test_an_explicit_simulated_platform_allows_sim_anywhere(data, tmp_path):
    real_cluster(data, tmp_path)["platform"]["simulated"] = True
    assert is_simulated(parse_plan(data, "plan.yaml"))


def test_drain_needs_kubectl_access_not_an_airflow_connection(data):
    data["platform"] = {k: v for k, v in data["platform"].items() if k != "kubeconfig"} | {"kubernetes_conn_id": "k8s"}
    node_failure(data)["injector"] = "drain"
    assert any(e.startswith(f"{NODE}.injector.method: 'drain' runs kubectl") for e in errors_of(data))


def test_a_command_without_the_node_is_refused(data):
    node_failure(data)["injector"] = {"method": "command", "fail": "reboot-a-node"}
    assert any(e.startswith(f"{NODE}.node_failure.injector.command.fail") and "must contain {node}" in e
               for e in errors_of(data))


def test_the_victim_must_be_evictable_before_the_fail_timeout(data):
    pool = data["pools"][0]
    pool["tolerations"] = [t for t in pool["tolerations"] if not t["key"].startswith("node.kubernetes.io/")]
    [err] = [e for e in errors_of(data) if e.startswith(f"{NODE}.fail_timeout_seconds")]
    assert "DefaultTolerationSeconds gives every pod 300 s" in err and "raise fail_timeout_seconds above 300" in err
    node_failure(data)["fail_timeout_seconds"] = 400
    parse_plan(data, "plan.yaml")


def test_a_pool_tolerating_the_taint_forever_never_shows_the_failure(data):
    node_failure(data)["injector"] = {"method": "taint", "key": "example.com/maintenance"}
    data["pools"][0]["tolerations"].append({"key": "example.com/maintenance", "operator": "Exists",
                                            "effect": "NoExecute"})
    [err] = [e for e in errors_of(data) if e.startswith(f"{NODE}.injector")]
    assert "tolerates the example.com/maintenance NoExecute taint forever" in err


def test_a_taint_key_must_be_a_qualified_name(data):
    node_failure(data)["injector"] = {"method": "taint", "key": "not a key"}
    assert any(e.startswith(f"{NODE}.node_failure.injector.taint.key") for e in errors_of(data))
