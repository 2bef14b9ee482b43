"""The preflight's named failures against the real API server (Kubernetes v1.37.2 with KWOK GPU nodes):
``gpupoc cluster manifests`` -> the built kubectl's ``apply`` -> ``gpupoc cluster kubeconfig`` (real
TokenRequest tokens), then team-serving's namespace deleted, team-nlp's Role without ``pods/log`` and a
RoleBinding letting team-vision read team-nlp's pods: the preflight names each, with its fix."""

from __future__ import annotations

import json

import pytest
import yaml

from gpupoc.controlplane import BinariesMissing, control_plane_binaries, start_control_plane

from .real_cluster import CROSS_TENANT_READ, REPO, cli, lines, tenant_role_without_pods_log

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("control-plane"), pytest.mark.timeout(900)]


def _no_sim_injectors(data: dict) -> None:
    """The simulated cluster's own node-failure endpoint (the default injector) does not exist here: node
    failures and service failures are injected as taints."""
    fault = data["test_classes"]["fault_recovery"]
    for entry in [i for i in fault.get("injections") or [] if i.get("kind") == "node_failure"] + list(
            fault.get("service_failures") or []):
        entry["injector"] = {"method": "taint"}


def _plan(tmp, cp) -> object:
    """plans/default.yaml pointed at the real control plane: the minted kubeconfig, its audit log, taint
    injectors."""
    data = yaml.safe_load((REPO / "plans" / "default.yaml").read_text(encoding="utf-8"))
    _no_sim_injectors(data)
    data["platform"]["kubeconfig"] = str(tmp / "kubeconfig")
    data["platform"]["simulated"] = False
    data["evidence_root"] = str(tmp / "evidence")
    data["evidence_sources"] = {"audit_log_path": str(cp.audit_log)}
    path = tmp / "plan.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _break(cp) -> None:
    k = cp.run_kubectl
    k("delete", "namespace", "team-serving", "--timeout=180s", timeout=200)  # the namespace controller empties it
    role = k("get", "role", "gpupoc-tenant", "-n", "team-nlp", "-o", "yaml").stdout
    k("replace", "-f", "-", input=tenant_role_without_pods_log(role))
    k("apply", "-f", "-", input=CROSS_TENANT_READ)


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    try:
        control_plane_binaries()
    except BinariesMissing as exc:
        pytest.skip(str(exc))
    tmp = tmp_path_factory.mktemp("real-preflight")
    cp = start_control_plane(tmp / "cp")
    try:
        plan = _plan(tmp, cp)
        rendered = cli("cluster", "manifests", "--plan", str(plan))
        assert rendered.returncode == 0, rendered.stderr
        applied = cp.run_kubectl("apply", "-f", "-", input=rendered.stdout, check=False)
        assert applied.returncode == 0, f"the real API server refused the manifests: {applied.stderr}"
        minted = cli("cluster", "kubeconfig", "--plan", str(plan), "--admin-kubeconfig", str(cp.kubeconfig),
                     "--admin-context", "admin")
        assert minted.returncode == 0, minted.stdout + minted.stderr
        _break(cp)
        res = cli("preflight", "--plan", str(plan), "--json", "--no-images", "--stack-dir", str(tmp / "no-stack"))
        try:
            report = json.loads(res.stdout)
        except ValueError:
            raise AssertionError(f"preflight printed no JSON (exit {res.returncode}): {res.stdout}{res.stderr}")
        yield res.returncode, report
    finally:
        cp.stop()


def test_a_missing_namespace_is_named_by_the_real_api_server(broken):
    rc, report = broken
    bad = {r["subject"]: r for r in lines(report, "namespaces")}
    assert rc == 1 and "team-serving" in bad and set(bad) <= {"team-serving"}, report["results"]
    assert bad["team-serving"]["detail"] == "does not exist", bad["team-serving"]
    assert "gpupoc cluster manifests" in bad["team-serving"]["fix"]


def test_a_tenant_token_without_pods_log_is_named_by_the_real_api_server(broken):
    _rc, report = broken
    bad = {r["subject"]: r for r in lines(report, "identities.verbs")}
    assert "team-nlp" in bad, report["results"]
    assert "may not get pods/log in team-nlp" in bad["team-nlp"]["detail"]
    assert "team-vision" not in bad, "team-vision's Role is intact"
    assert "gpupoc cluster manifests" in bad["team-nlp"]["fix"]


def test_a_cross_tenant_read_is_named_by_the_real_api_server(broken):
    _rc, report = broken
    bad = {r["subject"]: r for r in lines(report, "identities.isolation")}
    assert "team-vision" in bad and "team-nlp" not in bad, report["results"]
    assert "list pods in team-nlp" in bad["team-vision"]["detail"]
    assert "isolation finding" in bad["team-vision"]["detail"] and "rolebindings" in bad["team-vision"]["fix"]
