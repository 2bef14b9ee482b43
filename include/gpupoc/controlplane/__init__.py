"""A real Kubernetes control plane on this machine: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler (built from pinned modules by ``make control-plane``) and kwok, whose fake nodes are the plan's
GPU pools and whose Stages play each workload's lifecycle (docs/real-cluster.md)."""

from gpupoc.controlplane.binaries import Binaries, BinariesMissing, control_plane_binaries, kubectl_path
from gpupoc.controlplane.plane import ControlPlane, start_control_plane, stop_control_plane

__all__ = ["Binaries", "BinariesMissing", "ControlPlane", "control_plane_binaries", "kubectl_path",
           "start_control_plane", "stop_control_plane"]
