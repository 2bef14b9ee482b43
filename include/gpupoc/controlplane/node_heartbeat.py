"""Stop and start a KWOK node's heartbeat, as ``systemctl stop|start kubelet`` does a real node's
(``gpupoc controlplane node-stop|node-start NODE``; the ``command`` node-failure injector names them).

A kubelet's heartbeat is its Lease in ``kube-node-lease``, renewed every quarter of its duration. kwok renews
it for every node it manages. Two things stop it for one node:

- the Lease is taken over: holder ``gpupoc-node-stop``, renewed once now, for a day. kwok renews only a lease
  it holds or one that expired, and it leaves the node's status and pods alone while it does not hold the
  lease (as a stopped kubelet does). ``renewTime`` must move: kube-controller-manager v1.37's lease circuit
  breaker (``NodeControllerLeaseCircuitBreaker``) never marks a node whose live Lease differs from the last one
  it saw renewed, so a Lease edited without a new ``renewTime`` keeps its node Ready for ever;
- the annotation ``kwok.x-k8s.io/node`` becomes ``stopped``. kwok's ``--manage-nodes-with-annotation-selector``
  then ignores the node, even after a kwok restart. The annotation alone does not stop the heartbeat: kwok
  gets no event for a node that stopped matching and keeps renewing its Lease;
- the node's pods get the annotation ``gpupoc.io/node-stopped: "true"``, which kwok's
  ``--disregard-status-with-annotation-selector`` skips. kwok's read-only check of a node it does not hold
  reaches its pod controller only when that controller is built after the lease controller (in map order, so
  at some kwok starts only); without the annotation an evicted pod would be removed at the end of its grace
  period, where a real cluster keeps it Terminating until its node is back.

``node-start`` puts the annotation back, deletes the Lease (kwok creates its own again, takes the node back and
its node-initialize stage marks it Ready; the node lifecycle controller then removes its taints) and takes the
pods' annotation off, so kwok finishes what happened to them meanwhile (an evicted pod is removed).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable

from gpupoc.common.timefmt import utcnow
from gpupoc.controlplane.flags import STOPPED_NODE_POD
from gpupoc.controlplane.nodes import KWOK_ANNOTATION
from gpupoc.exceptions import GpupocError

LEASE_NAMESPACE = "kube-node-lease"
STOP_HOLDER = "gpupoc-node-stop"
MANAGED, STOPPED = "fake", "stopped"
STOP_LEASE_SECONDS = int(timedelta(days=1).total_seconds())

# kubectl args -> (exit code, stdout, stderr); the control plane's ``run_kubectl`` in production
Kubectl = Callable[..., object]


class NodeNotKwok(GpupocError):
    """The node is absent or is no KWOK node of this control plane."""


@dataclass(frozen=True)
class HeartbeatChange:
    node: str
    action: str  # stopped | started
    detail: str

    def line(self) -> str:
        return f"node {self.node}: heartbeat {self.action} ({self.detail})"


def control_plane_at(root: Path):
    """The control plane under ``root`` (running or not), to run its kubectl as the administrator."""
    from gpupoc.controlplane.binaries import control_plane_binaries
    from gpupoc.controlplane.layout import Layout, load_or_choose_ports
    from gpupoc.controlplane.plane import ControlPlane

    layout = Layout(Path(root).resolve())
    if not (layout.ports_file.is_file() and layout.kubeconfig.is_file()):
        raise GpupocError(f"no control plane under {layout.root} (no {layout.ports_file.name} or "
                          f"{layout.kubeconfig.name}); start one with `gpupoc controlplane up --dir {root}`, or "
                          "pass the --dir it was started with (a plan's command runs in the plan's directory)")
    return ControlPlane(layout, load_or_choose_ports(layout), control_plane_binaries())


def micro_time(at: datetime) -> str:
    """A Lease's ``MicroTime``: RFC 3339 with microseconds, UTC."""
    return at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _run(kubectl: Kubectl, *args: str) -> tuple[int, str, str]:
    res = kubectl(*args, check=False)
    return res.returncode, res.stdout, res.stderr


def _kwok_node(kubectl: Kubectl, node: str) -> dict:
    code, out, err = _run(kubectl, "get", "node", node, "-o", "json")
    if code != 0:
        raise NodeNotKwok(f"node {node!r}: {err.strip()[-300:] or 'not found'}; name one of `kubectl get nodes`")
    obj = json.loads(out)
    if KWOK_ANNOTATION not in ((obj.get("metadata") or {}).get("annotations") or {}):
        raise NodeNotKwok(f"node {node!r} has no {KWOK_ANNOTATION} annotation: it is not a KWOK node of the "
                          "control plane, and only a KWOK node's heartbeat can be stopped this way; stop a real "
                          "node's kubelet with your own command (ssh NODE sudo systemctl stop kubelet)")
    return obj


def _annotate(kubectl: Kubectl, node: str, value: str) -> None:
    code, _, err = _run(kubectl, "annotate", "node", node, f"{KWOK_ANNOTATION}={value}", "--overwrite")
    if code != 0:
        raise GpupocError(f"node {node!r}: annotating {KWOK_ANNOTATION}={value} failed: {err.strip()[-300:]}")


def _mark_pods(kubectl: Kubectl, node: str, stopped: bool) -> None:
    """Annotate (or un-annotate) every pod bound to ``node``, in every namespace."""
    mark = f"{STOPPED_NODE_POD}=true" if stopped else f"{STOPPED_NODE_POD}-"
    code, _, err = _run(kubectl, "annotate", "pods", "--all-namespaces", "--overwrite",
                        f"--field-selector=spec.nodeName={node}", mark)
    if code != 0 and not any(ok in err for ok in ("no objects passed", "NotFound")):  # none, or one gone since
        raise GpupocError(f"node {node!r}: annotating its pods {mark} failed: {err.strip()[-300:]}")


def stop_heartbeat(kubectl: Kubectl, node: str, now: datetime | None = None) -> HeartbeatChange:
    """Stop ``node``'s heartbeat (see the module); the node lifecycle controller marks it unreachable after its
    ``--node-monitor-grace-period``."""
    _kwok_node(kubectl, node)
    _annotate(kubectl, node, STOPPED)
    spec = {"holderIdentity": STOP_HOLDER, "leaseDurationSeconds": STOP_LEASE_SECONDS,
            "renewTime": micro_time(now or utcnow())}
    code, _, err = _run(kubectl, "patch", "lease", node, "-n", LEASE_NAMESPACE, "--type=merge", "-p",
                        json.dumps({"spec": spec}))
    if code != 0:
        _annotate(kubectl, node, MANAGED)  # leave it as it was
        raise GpupocError(f"node {node!r}: its Lease {LEASE_NAMESPACE}/{node} could not be taken over "
                          f"({err.strip()[-300:]}); kwok creates it once it manages the node: wait until the "
                          "node is Ready, then stop it")
    _mark_pods(kubectl, node, True)
    return HeartbeatChange(node, "stopped", f"Lease {LEASE_NAMESPACE}/{node} held by {STOP_HOLDER}, "
                           f"{KWOK_ANNOTATION}={STOPPED}, its pods {STOPPED_NODE_POD}=true")


def start_heartbeat(kubectl: Kubectl, node: str) -> HeartbeatChange:
    """Give ``node`` back to kwok: the annotation restored, the taken-over Lease deleted (kwok makes its own)."""
    _kwok_node(kubectl, node)
    _annotate(kubectl, node, MANAGED)
    code, out, err = _run(kubectl, "get", "lease", node, "-n", LEASE_NAMESPACE, "-o", "json")
    holder = ((json.loads(out).get("spec") or {}).get("holderIdentity") if code == 0 else None)
    if holder == STOP_HOLDER:
        code, _, err = _run(kubectl, "delete", "lease", node, "-n", LEASE_NAMESPACE, "--ignore-not-found")
        if code != 0:
            raise GpupocError(f"node {node!r}: its Lease {LEASE_NAMESPACE}/{node} could not be deleted: "
                              f"{err.strip()[-300:]}")
        _mark_pods(kubectl, node, False)
        return HeartbeatChange(node, "started", f"Lease {LEASE_NAMESPACE}/{node} released to kwok, "
                               f"{KWOK_ANNOTATION}={MANAGED}, its pods' {STOPPED_NODE_POD} removed")
    _mark_pods(kubectl, node, False)
    return HeartbeatChange(node, "started", f"its heartbeat was not stopped (Lease holder {holder or 'none'}); "
                           f"{KWOK_ANNOTATION}={MANAGED}")
