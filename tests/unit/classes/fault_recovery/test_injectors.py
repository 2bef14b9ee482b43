"""The node injectors the plan chooses: placeholders filled and quoted, commands run in the plan's directory
with this interpreter's tools on PATH, secrets kept out of the record, and each method built from its spec."""

from __future__ import annotations

import sys
from pathlib import Path

from gpupoc.classes.fault_recovery.injectors import (CommandInjector, SimNodeInjector, TaintInjector, build_injector,
                                       kubectl_drain_injector, render)
from gpupoc.plan.injector_spec import CommandInjector as CommandSpec
from gpupoc.plan.injector_spec import DrainInjector, SimInjector, TaintInjector as TaintSpec


def test_render_quotes_known_placeholders_and_leaves_other_braces():
    out = render("ssh {node} \"awk '{print $1}'\" --kubeconfig {kubeconfig}",
                 {"node": "gpu node-1", "kubeconfig": "/k/c"})
    assert out == "ssh 'gpu node-1' \"awk '{print $1}'\" --kubeconfig /k/c"


def test_a_command_runs_in_its_directory_with_the_interpreters_tools_first_on_path(tmp_path):
    inj = CommandInjector("pwd; echo $PATH | cut -d: -f1; echo node={node}", cwd=str(tmp_path))
    rec = inj.fail("training-node-1")
    assert rec.ok and rec.method == "command" and rec.action == "fail" and rec.command.endswith("node=training-node-1")
    assert str(tmp_path) in rec.detail and str(Path(sys.executable).parent) in rec.detail


def test_a_failing_or_missing_command_is_recorded_as_not_ok_and_tokens_are_redacted():
    failed = CommandInjector("echo 'Authorization: Bearer abc.def.ghi' >&2; exit 4 # {node}").fail("n1")
    assert not failed.ok and failed.detail.startswith("exit 4") and "abc.def.ghi" not in failed.detail
    missing = CommandInjector("true {node}").recover("n1")
    assert not missing.ok and missing.detail == "no recover command configured"


def test_each_method_is_built_from_its_spec(tmp_path, monkeypatch):
    monkeypatch.setattr("gpupoc.classes.fault_recovery.injectors.kubectl_command", lambda: "kubectl")
    admin = object()
    assert isinstance(build_injector(SimInjector(), admin, kubeconfig=None, context=None), SimNodeInjector)
    taint = build_injector(TaintSpec(method="taint", key="example.com/down", value="yes"), admin, kubeconfig=None,
                           context=None)
    assert isinstance(taint, TaintInjector) and (taint.key, taint.value, taint.method) == ("example.com/down", "yes",
                                                                                           "taint")
    drain = build_injector(DrainInjector(method="drain", grace_period_seconds=5, timeout_seconds=60), admin,
                           kubeconfig="/k/config", context="admin")
    assert drain.method == "kubectl-drain" and "--grace-period=5 --timeout=60s" in drain.fail_command
    assert drain.fail_command.startswith("kubectl --kubeconfig /k/config --context admin cordon {node} && ")
    cmd = build_injector(CommandSpec(method="command", fail="ssh {node} stop --kc {kubeconfig}"), admin,
                         kubeconfig="/k/config", context="admin", cwd=str(tmp_path))
    assert isinstance(cmd, CommandInjector) and cmd.values == {"kubeconfig": "/k/config", "context": "admin"}
    assert cmd.cwd == str(tmp_path) and cmd.recover_command == ""


def test_drain_without_a_kubeconfig_uses_kubectls_in_cluster_account(monkeypatch):
    monkeypatch.setattr("gpupoc.classes.fault_recovery.injectors.kubectl_command", lambda: "kubectl")
    inj = kubectl_drain_injector(None, "admin")
    assert inj.fail_command.startswith("kubectl cordon {node} && kubectl drain {node} ")
    assert inj.recover_command == "kubectl uncordon {node}"


def test_drain_runs_the_built_kubectl_when_there_is_one(monkeypatch):
    monkeypatch.setattr("gpupoc.classes.fault_recovery.injectors.kubectl_command", lambda: "/cache/bin dir/kubectl")
    inj = kubectl_drain_injector("/k/config", "admin")
    assert inj.fail_command.startswith("'/cache/bin dir/kubectl' --kubeconfig /k/config --context admin cordon {node}")
    assert inj.recover_command.startswith("'/cache/bin dir/kubectl' ")


class _Answers:
    """A KubeCaller answering every call with one Response."""

    def __init__(self, response):
        self.response = response

    def call(self, method, path, **_):
        return self.response


def test_sim_against_an_api_server_without_the_sim_endpoint_names_the_method_and_the_fix():
    from gpupoc.pipeline.k8s import Response

    gone = Response(404, {"kind": "Status", "message": "the server could not find the requested resource"})
    rec = SimNodeInjector(_Answers(gone)).fail("training-node-1")
    assert not rec.ok and "not the simulated cluster" in rec.detail and "'sim'" in rec.detail
    assert "gpupoc controlplane node-stop {node}" in rec.detail and "taint or drain" in rec.detail


def test_sim_on_an_unknown_node_says_only_what_the_simulated_cluster_said():
    from gpupoc.pipeline.k8s import Response

    rec = SimNodeInjector(_Answers(Response(404, {"kind": "Status", "message": 'nodes "x" not found'}))).fail("x")
    assert not rec.ok and rec.detail == 'HTTP 404: nodes "x" not found'
