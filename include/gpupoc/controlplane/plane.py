"""``start_control_plane``: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok as local
processes under one root, the plan's pools as KWOK GPU nodes, an administrator kubeconfig; a second start on
the same root resumes what runs and starts what does not. ``ControlPlane.stop`` leaves no process."""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from gpupoc.cluster.audit_policy import render_audit_policy
from gpupoc.controlplane import flags, processes
from gpupoc.controlplane.binaries import Binaries, control_plane_binaries
from gpupoc.controlplane.keys import ADMIN, Keys, ensure_keys, read_tokens, write_kubeconfigs
from gpupoc.controlplane.layout import COMPONENTS, Layout, Ports, load_or_choose_ports, port_free
from gpupoc.controlplane.nodes import node_objects
from gpupoc.controlplane.pod_logs import logs_crd
from gpupoc.controlplane.port_forward import portforward_crd
from gpupoc.controlplane.readiness import ComponentNotReady, etcd_ready, exactly_ok, wait_until
from gpupoc.controlplane.stages import write_kwok_config
from gpupoc.controlplane.webhook import write_webhook_config
from gpupoc.exceptions import GpupocError
from gpupoc.plan.loader import DEFAULT_PLAN, load_plan


NOT_READY_TAINT = "node.kubernetes.io/not-ready"


@dataclass
class ControlPlane:
    """A running control plane (see the module)."""

    layout: Layout
    ports: Ports
    binaries: Binaries
    timings: dict[str, float] = field(default_factory=dict)  # seconds each step took at this start

    @property
    def root(self) -> Path:
        return self.layout.root

    @property
    def kubeconfig(self) -> Path:
        return self.layout.kubeconfig

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.ports.apiserver}"

    @property
    def ca_file(self) -> Path:
        return self.layout.pki / "ca.crt"

    @property
    def audit_log(self) -> Path:
        return self.layout.audit_log

    @property
    def kubectl(self) -> Path:
        return self.binaries.kubectl

    @property
    def version(self) -> str:
        return self.binaries.kubernetes_version

    def binary(self, component: str) -> Path:
        return getattr(self.binaries, component.replace("-", "_"))

    def pids(self) -> dict[str, int | None]:
        """Each component's process id, None when it does not run."""
        return {c: processes.running_pid(self.layout, c, self.binary(c)) for c in COMPONENTS}

    def run_kubectl(self, *args: str, input: str | None = None, timeout: float = 60,
                    check: bool = True) -> subprocess.CompletedProcess:
        """The built kubectl with the administrator's kubeconfig."""
        cmd = [str(self.kubectl), f"--kubeconfig={self.kubeconfig}", *args]
        res = subprocess.run(cmd, capture_output=True, text=True, input=input, timeout=timeout)
        if check and res.returncode != 0:
            raise GpupocError(f"kubectl {' '.join(args)} exited {res.returncode}: {res.stderr.strip()[-600:]}")
        return res

    def stop(self) -> list[str]:
        """Stop the process runner (and the processes it runs), Kueue (``kueue.py``) when it runs, then every
        component, kwok first and etcd last; returns the ones that were running."""
        from gpupoc.controlplane.runner import stop_process_runner

        stop_process_runner(self.layout)
        kueue = ["kueue"] if processes.stop(self.layout, "kueue", self.binaries.directory / "kueue") else []
        return kueue + [c for c in reversed(COMPONENTS) if processes.stop(self.layout, c, self.binary(c))]


def start_control_plane(root: Path, pools=None, audit_webhook_url: str | None = None, *, plan=None,
                        audit_webhook_ca: Path | None = None, process_runner: bool = True,
                        features: flags.Features = flags.DEFAULT_FEATURES) -> ControlPlane:
    """Start (or resume) the control plane under ``root`` with KWOK nodes for ``pools`` (default: the plan's;
    the plan defaults to plans/default.yaml, whose audit policy the API server gets) and, unless
    ``process_runner`` is False, the process runner (``runner.py``: workload pods as local processes);
    ``features``: DRA GPUs (``dra.py``), the Workload API (``flags.Features``)."""
    binaries = control_plane_binaries()
    plan = plan or load_plan(DEFAULT_PLAN)
    pools = plan.pools if pools is None else pools
    layout = Layout(Path(root).resolve())
    layout.make()
    ports = load_or_choose_ports(layout)
    cp = ControlPlane(layout, ports, binaries)
    keys = ensure_keys(layout)
    write_kubeconfigs(layout, keys, cp.server)
    _check_ports(cp)
    policy = layout.config / "audit-policy.yaml"
    policy.write_text(render_audit_policy(plan), encoding="utf-8")
    webhook = write_webhook_config(layout.config / "audit-webhook.kubeconfig", audit_webhook_url, audit_webhook_ca)
    t0 = time.monotonic()
    try:
        _start_core(cp, keys, policy, webhook, features)
        _start_kwok(cp, keys, pools, features)
        if process_runner:
            from gpupoc.controlplane.runner import start_process_runner

            started = start_process_runner(cp)
            cp.timings[started.timing_name] = started.seconds
    except BaseException:
        cp.stop()
        raise
    cp.timings["total"] = time.monotonic() - t0
    return cp


def _check_ports(cp: ControlPlane) -> None:
    """A recorded port another process took since: fail naming it (the data stays)."""
    pids = cp.pids()
    owners = {"etcd_client": "etcd", "etcd_peer": "etcd", "apiserver": "kube-apiserver",
              "controller_manager": "kube-controller-manager", "scheduler": "kube-scheduler", "kwok": "kwok"}
    for port_name, component in owners.items():
        port = getattr(cp.ports, port_name)
        if pids[component] is None and not port_free(port):
            raise GpupocError(f"port {port} ({port_name}, recorded in {cp.layout.ports_file}) is taken by another "
                              f"process; stop it, or remove {cp.layout.root} to start afresh on new ports")


def _ensure(cp: ControlPlane, name: str, argv: list[str], ready) -> None:
    pid = processes.running_pid(cp.layout, name, cp.binary(name))
    resumed = pid is not None
    if not resumed:
        pid = processes.start(cp.layout, name, argv)
    cp.timings[name + (" (resumed)" if resumed else "")] = wait_until(cp.layout, name, pid, ready)


def _start_core(cp: ControlPlane, keys: Keys, policy: Path, webhook: Path | None, features: flags.Features) -> None:
    b, layout, ports = cp.binaries, cp.layout, cp.ports
    token = read_tokens(keys.token_file)[ADMIN]
    _ensure(cp, "etcd", flags.etcd_argv(b.etcd, layout, ports), etcd_ready(ports.etcd_client))
    _ensure(cp, "kube-apiserver",
            flags.apiserver_argv(b.kube_apiserver, layout, ports, keys, policy, webhook, features),
            exactly_ok(f"{cp.server}/readyz", ca_file=cp.ca_file, token=token))
    _ensure(cp, "kube-controller-manager", flags.controller_manager_argv(b.kube_controller_manager, layout, ports,
                                                                           keys, features),
            exactly_ok(f"https://127.0.0.1:{ports.controller_manager}/healthz", verify=False))
    config = flags.scheduler_config(layout, features)
    if config is not None:
        (layout.config / "kube-scheduler.yaml").write_text(json.dumps(config), encoding="utf-8")
    _ensure(cp, "kube-scheduler", flags.scheduler_argv(b.kube_scheduler, layout, ports, features),
            exactly_ok(f"https://127.0.0.1:{ports.scheduler}/healthz", verify=False))


def _start_kwok(cp: ControlPlane, keys: Keys, pools, features: flags.Features) -> None:
    config = write_kwok_config(cp.layout.config / "kwok.yaml", cp.layout.pod_logs)
    nodes = node_objects(pools)
    if features.dra:
        from gpupoc.controlplane.dra import dra_nodes

        nodes = dra_nodes(nodes)
    nodes_file = cp.layout.config / "nodes.yaml"
    nodes_file.write_text(yaml.safe_dump_all(nodes, sort_keys=False), encoding="utf-8")
    t0 = time.monotonic()
    cp.run_kubectl("apply", "-f", str(nodes_file))
    cp.run_kubectl("apply", "-f", "-", input=yaml.safe_dump_all([logs_crd(), portforward_crd()]))
    cp.run_kubectl("wait", "--for=condition=Established", "--timeout=120s", "crd/logs.kwok.x-k8s.io",
                   "crd/portforwards.kwok.x-k8s.io", timeout=150)
    cp.timings["nodes applied"] = time.monotonic() - t0
    names = {n["metadata"]["name"] for n in nodes}
    _ensure(cp, "kwok", flags.kwok_argv(cp.binaries.kwok, cp.layout, cp.ports, keys, config),
            lambda: _nodes_ready(cp, names))
    if features.dra:
        from gpupoc.controlplane.dra import publish_dra

        cp.timings["dra published"] = publish_dra(cp, pools)


def _nodes_ready(cp: ControlPlane, names: set[str]) -> tuple[bool, str]:
    res = cp.run_kubectl("get", "nodes", "-o", "json", check=False, timeout=20)
    if res.returncode != 0:
        return False, res.stderr.strip()[-200:]
    ready = {n["metadata"]["name"] for n in json.loads(res.stdout)["items"] if node_ready(n)}
    missing = sorted(names - ready)
    return not missing, f"not Ready yet (or still tainted not-ready): {missing}"


def node_ready(node: dict) -> bool:
    """Ready, and the node lifecycle controller has taken its ``node.kubernetes.io/not-ready`` taint off (it
    lags the condition by a pass: a pod scheduled before that is refused, and a preflight says the pool's nodes
    carry a taint it does not tolerate)."""
    ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                for c in (node.get("status") or {}).get("conditions") or [])
    tainted = any(t.get("key") == NOT_READY_TAINT for t in (node.get("spec") or {}).get("taints") or [])
    return ready and not tainted


def stop_control_plane(root: Path) -> list[str]:
    """Stop what runs under ``root`` (nothing to do when nothing runs); the components that were running."""
    layout = Layout(Path(root).resolve())
    if not layout.ports_file.is_file():
        return []
    cp = ControlPlane(layout, load_or_choose_ports(layout), control_plane_binaries())
    return cp.stop()


__all__ = ["ComponentNotReady", "ControlPlane", "start_control_plane", "stop_control_plane"]
