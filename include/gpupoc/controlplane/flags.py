"""Each component's command line, as pure functions of the layout, ports and keys (all on loopback).
The flags are the ones seen working on this kind of machine (docs/real-cluster.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpupoc.controlplane.front_proxy import aggregation_flags
from gpupoc.controlplane.keys import Keys
from gpupoc.controlplane.layout import Layout, Ports

LOOPBACK = "127.0.0.1"
SERVICE_CIDR = "10.96.0.0/16"  # KWOK gives pods 10.0.0.0/24: no overlap
KWOK_NODE_SELECTOR = "kwok.x-k8s.io/node=fake"
# A node's heartbeat, shortened for the POC's time budget in the same proportion as a kubelet's defaults (a
# 40 s lease renewed every 10 s, a 40-50 s grace period): kwok renews each node's Lease every quarter of its
# duration (5 s), and kube-controller-manager marks a node unreachable after four missed renewals (20 s), so
# one late renewal on a loaded machine does not make a node flap (docs/real-cluster.md, "Node failures").
NODE_LEASE_SECONDS = 20
NODE_MONITOR_GRACE = "20s"
# kwok leaves alone the pods carrying this annotation (``node_heartbeat``: those of a node whose heartbeat
# stopped), as a stopped kubelet leaves its pods: nothing confirms their deletion until the node is back.
STOPPED_NODE_POD = "gpupoc.io/node-stopped"


@dataclass(frozen=True)
class Features:
    """Options of a start beyond v1.37's defaults. ``dra`` needs no gate (DRA is GA, partitionable devices and
    consumable capacity beta and on, DRA-backed extended resources GA): it only changes the nodes (``dra.py``).
    ``workload_api`` turns on ``GenericWorkload`` (beta, off by default: the Workload and PodGroup API in
    ``scheduling.k8s.io/v1beta1``, pods' ``spec.schedulingGroup``, kube-scheduler's GangScheduling plugin)."""

    dra: bool = False
    workload_api: bool = False

    def gate_flags(self) -> list[str]:
        return ["--feature-gates=GenericWorkload=true"] if self.workload_api else []

    def apiserver_flags(self) -> list[str]:
        return [*self.gate_flags(), "--runtime-config=scheduling.k8s.io/v1beta1=true"] if self.workload_api else []


DEFAULT_FEATURES = Features()


def etcd_argv(binary: Path, layout: Layout, ports: Ports) -> list[str]:
    client, peer = f"http://{LOOPBACK}:{ports.etcd_client}", f"http://{LOOPBACK}:{ports.etcd_peer}"
    return [str(binary), "--name", "n0", "--data-dir", str(layout.etcd_data),
            "--listen-client-urls", client, "--advertise-client-urls", client,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", f"n0={peer}", "--auto-compaction-retention=1", "--unsafe-no-fsync"]


def apiserver_argv(binary: Path, layout: Layout, ports: Ports, keys: Keys, audit_policy: Path,
                   audit_webhook_config: Path | None = None, features: Features = DEFAULT_FEATURES) -> list[str]:
    argv = [str(binary), f"--etcd-servers=http://{LOOPBACK}:{ports.etcd_client}",
            f"--bind-address={LOOPBACK}", f"--advertise-address={LOOPBACK}", f"--secure-port={ports.apiserver}",
            f"--tls-cert-file={keys.pki.cert}", f"--tls-private-key-file={keys.pki.key}",
            f"--client-ca-file={keys.pki.ca_cert}", f"--token-auth-file={keys.token_file}",
            "--authorization-mode=Node,RBAC",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={keys.sa_public}", f"--service-account-signing-key-file={keys.sa_private}",
            f"--service-cluster-ip-range={SERVICE_CIDR}", "--allow-privileged=true",
            "--endpoint-reconciler-type=none",
            f"--audit-policy-file={audit_policy}", f"--audit-log-path={layout.audit_log}",
            "--audit-log-format=json", "--audit-log-maxsize=200", "--audit-log-maxbackup=2",
            *aggregation_flags(layout.pki, keys.pki.ca_cert)]
    if audit_webhook_config is not None:
        argv += [f"--audit-webhook-config-file={audit_webhook_config}", "--audit-webhook-mode=batch"]
    return argv + features.apiserver_flags()


def _kubeconfig_flags(kubeconfig: Path) -> list[str]:
    return [f"--kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}"]


def controller_manager_argv(binary: Path, layout: Layout, ports: Ports, keys: Keys,
                            features: Features = DEFAULT_FEATURES) -> list[str]:
    return [str(binary), *_kubeconfig_flags(layout.component_kubeconfig("kube-controller-manager")),
            f"--bind-address={LOOPBACK}", f"--secure-port={ports.controller_manager}", "--leader-elect=false",
            f"--root-ca-file={keys.pki.ca_cert}", f"--service-account-private-key-file={keys.sa_private}",
            "--use-service-account-credentials=true", f"--service-cluster-ip-range={SERVICE_CIDR}",
            f"--cluster-signing-cert-file={keys.pki.ca_cert}", f"--cluster-signing-key-file={keys.ca_key}",
            f"--node-monitor-grace-period={NODE_MONITOR_GRACE}", *features.gate_flags()]


def scheduler_argv(binary: Path, layout: Layout, ports: Ports, features: Features = DEFAULT_FEATURES) -> list[str]:
    return [str(binary), *_kubeconfig_flags(layout.component_kubeconfig("kube-scheduler")),
            f"--bind-address={LOOPBACK}", f"--secure-port={ports.scheduler}", "--leader-elect=false",
            *features.gate_flags()]


def kwok_argv(binary: Path, layout: Layout, ports: Ports, keys: Keys, config: Path) -> list[str]:
    """kwok manages the nodes annotated ``kwok.x-k8s.io/node: fake`` and serves the kubelet API on loopback
    (logs through ``pods/log``); ``Logs`` objects are its CRD (one per pod, ``pod_logs.py``)."""
    return [str(binary), f"--kubeconfig={layout.component_kubeconfig('kwok')}", f"--config={config}",
            "--manage-all-nodes=false", f"--manage-nodes-with-annotation-selector={KWOK_NODE_SELECTOR}",
            f"--node-lease-duration-seconds={NODE_LEASE_SECONDS}", f"--tls-cert-file={keys.pki.cert}",
            f"--tls-private-key-file={keys.pki.key}", f"--node-ip={LOOPBACK}", f"--node-port={ports.kwok}",
            f"--server-address={LOOPBACK}:{ports.kwok}", "--enable-crds=Logs,PortForward",
            f"--disregard-status-with-annotation-selector={STOPPED_NODE_POD}=true"]
