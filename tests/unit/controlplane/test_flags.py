"""Each component's command line: loopback only, the audit backends, readiness ports, no token on it."""

from __future__ import annotations

from pathlib import Path

from gpupoc.controlplane import flags
from gpupoc.controlplane.keys import ensure_keys
from gpupoc.controlplane.layout import Layout, Ports

PORTS = Ports(etcd_client=20001, etcd_peer=20002, apiserver=20003, controller_manager=20004, scheduler=20005,
              kwok=20006)


def setup(tmp_path):
    layout = Layout(tmp_path)
    layout.make()
    return layout, ensure_keys(layout)


def test_the_api_server_has_rbac_node_authz_audit_and_a_service_range_apart_from_kwoks_pods(tmp_path):
    layout, keys = setup(tmp_path)
    argv = flags.apiserver_argv(Path("/b/kube-apiserver"), layout, PORTS, keys, tmp_path / "policy.yaml")
    assert "--authorization-mode=Node,RBAC" in argv and "--bind-address=127.0.0.1" in argv
    assert "--secure-port=20003" in argv and "--etcd-servers=http://127.0.0.1:20001" in argv
    assert f"--audit-log-path={layout.audit_log}" in argv and f"--audit-policy-file={tmp_path / 'policy.yaml'}" in argv
    assert "--service-cluster-ip-range=10.96.0.0/16" in argv
    assert not any(a.startswith("--audit-webhook") for a in argv)
    assert not any("enable-priority-and-fairness=false" in a for a in argv)


def test_the_webhook_backend_is_added_when_asked(tmp_path):
    layout, keys = setup(tmp_path)
    argv = flags.apiserver_argv(Path("/b/a"), layout, PORTS, keys, tmp_path / "p", tmp_path / "hook.kubeconfig")
    assert f"--audit-webhook-config-file={tmp_path / 'hook.kubeconfig'}" in argv


def test_no_command_line_carries_a_token(tmp_path):
    layout, keys = setup(tmp_path)
    tokens = [row.split(",")[0] for row in keys.token_file.read_text().splitlines()]
    lines = [flags.etcd_argv(Path("/b/etcd"), layout, PORTS),
             flags.apiserver_argv(Path("/b/a"), layout, PORTS, keys, tmp_path / "p"),
             flags.controller_manager_argv(Path("/b/c"), layout, PORTS, keys),
             flags.scheduler_argv(Path("/b/s"), layout, PORTS),
             flags.kwok_argv(Path("/b/k"), layout, PORTS, keys, tmp_path / "kwok.yaml")]
    joined = " ".join(" ".join(a) for a in lines)
    assert tokens and not any(t in joined for t in tokens)


def test_kwok_serves_the_kubelet_api_on_loopback_for_its_annotated_nodes(tmp_path):
    layout, keys = setup(tmp_path)
    argv = flags.kwok_argv(Path("/b/kwok"), layout, PORTS, keys, tmp_path / "kwok.yaml")
    assert "--server-address=127.0.0.1:20006" in argv and "--node-port=20006" in argv
    assert "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake" in argv
    assert "--manage-all-nodes=false" in argv


def test_a_node_is_marked_unreachable_after_four_missed_lease_renewals(tmp_path):
    layout, keys = setup(tmp_path)
    kcm = flags.controller_manager_argv(Path("/b/kcm"), layout, PORTS, keys)
    kwok = flags.kwok_argv(Path("/b/kwok"), layout, PORTS, keys, tmp_path / "kwok.yaml")
    [grace] = [a.split("=", 1)[1] for a in kcm if a.startswith("--node-monitor-grace-period=")]
    [lease] = [int(a.split("=", 1)[1]) for a in kwok if a.startswith("--node-lease-duration-seconds=")]
    renew_every = lease / 4  # kwok renews a lease every quarter of its duration, as a kubelet does
    assert grace.endswith("s") and float(grace[:-1]) == 4 * renew_every


def test_kwok_leaves_alone_the_pods_of_a_stopped_node(tmp_path):
    layout, keys = setup(tmp_path)
    argv = flags.kwok_argv(Path("/b/kwok"), layout, PORTS, keys, tmp_path / "kwok.yaml")
    assert f"--disregard-status-with-annotation-selector={flags.STOPPED_NODE_POD}=true" in argv


def test_the_workload_api_turns_on_generic_workload_in_every_component_and_serves_its_beta_group(tmp_path):
    layout, keys = setup(tmp_path)
    on = flags.Features(workload_api=True)
    api = flags.apiserver_argv(Path("/b/a"), layout, PORTS, keys, tmp_path / "p", features=on)
    assert "--feature-gates=GenericWorkload=true" in api and "--runtime-config=scheduling.k8s.io/v1beta1=true" in api
    assert "--feature-gates=GenericWorkload=true" in flags.scheduler_argv(Path("/b/s"), layout, PORTS, on)
    assert "--feature-gates=GenericWorkload=true" in flags.controller_manager_argv(Path("/b/c"), layout, PORTS,
                                                                                    keys, on)


def test_dra_and_the_defaults_change_no_command_line(tmp_path):
    layout, keys = setup(tmp_path)
    for features in (flags.DEFAULT_FEATURES, flags.Features(dra=True)):
        lines = [flags.apiserver_argv(Path("/b/a"), layout, PORTS, keys, tmp_path / "p", features=features),
                 flags.scheduler_argv(Path("/b/s"), layout, PORTS, features),
                 flags.controller_manager_argv(Path("/b/c"), layout, PORTS, keys, features)]
        assert not any(a.startswith(("--feature-gates", "--runtime-config")) for argv in lines for a in argv)


def test_the_api_server_forwards_aggregated_apis_with_its_front_proxy_certificate(tmp_path):
    layout, keys = setup(tmp_path)
    argv = flags.apiserver_argv(Path("/b/a"), layout, PORTS, keys, tmp_path / "p")
    assert f"--proxy-client-cert-file={layout.pki / 'front-proxy-client.crt'}" in argv
    assert f"--requestheader-client-ca-file={keys.pki.ca_cert}" in argv
    assert "--requestheader-allowed-names=front-proxy-client" in argv
